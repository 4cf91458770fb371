"""Open MPI 4.1 (Debian 12's 4.1.4): coll/tuned's algorithms and fixed decision are
:mod:`commodel.openmpi`'s; a run forces an algorithm or a rules file through MCA parameters
(``OMPI_MCA_`` variables, which mpirun passes to every rank as ``--mca`` options)."""

from __future__ import annotations

from .. import openmpi
from .mpi import Mpi


def tuned_env(collective: str, algorithm: int, rules_file: str | None) -> dict[str, str]:
    """coll/tuned's MCA parameters of a run: none for the default decision, dynamic rules
    with the algorithm forced (and its segment size, :data:`commodel.openmpi.SEGSIZE`), or
    dynamic rules with a rules file."""
    if rules_file:
        return {
            "OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
            "OMPI_MCA_coll_tuned_dynamic_rules_filename": rules_file,
        }
    if not algorithm:
        return {}
    env = {
        "OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
        f"OMPI_MCA_coll_tuned_{collective}_algorithm": str(algorithm),
    }
    seg = openmpi.SEGSIZE.get((collective, algorithm))
    if seg:
        env[f"OMPI_MCA_coll_tuned_{collective}_algorithm_segmentsize"] = str(seg)
    return env


OPENMPI_41 = Mpi(
    name="openmpi-4.1",
    label="Open MPI 4.1.4",
    algorithms=openmpi.ALGORITHMS,
    default_algorithm=openmpi.default_algorithm,
    run_env=tuned_env,
    rules_format="ompi-tuned",
    segsize=openmpi.SEGSIZE,
    faninout=openmpi.FANINOUT,
)
