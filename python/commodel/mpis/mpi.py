"""What commodel holds of one MPI (:class:`Mpi`), and where ``make mpis`` installed it; the
modules of each MPI build on this (``commodel.mpis`` picks among them)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import CommodelError

Algorithms = dict[str, list[tuple[int, str, "str | None"]]]

NAMES = ("openmpi-4.1", "openmpi-5.0", "mpich", "intel-mpi")


@dataclass(frozen=True)
class Mpi:
    """One MPI as commodel uses it (see the module text)."""

    name: str  # "openmpi-4.1", "openmpi-5.0", "mpich", "intel-mpi"
    label: str  # as a user reads it: "Open MPI 4.1.4"
    algorithms: Algorithms
    default_algorithm: Callable[[str, int, int], int]
    # how a run forces algorithm N of a collective (N = 0: the default decision) or uses
    # a rules file: the environment variables the launcher passes to every rank
    run_env: Callable[[str, int, str | None], dict[str, str]]
    # the rules format: "ompi-tuned" (coll/tuned's classic dynamic rules), "mpich-json" or
    # "impi-adjust" (I_MPI_ADJUST_<COLL> variables in a file a shell sources)
    rules_format: str
    # segment sizes and fan-outs a rule passes with an algorithm (Open MPI only)
    segsize: dict[tuple[str, int], int] = field(default_factory=dict)
    faninout: dict[tuple[str, int], int] = field(default_factory=dict)

    def label_of(self, collective: str, number: int) -> str:
        """Algorithm ``number``'s name ("default" for 0)."""
        if number == 0:
            return "default"
        for n, alg, _gen in self.algorithms.get(collective, []):
            if n == number:
                return alg
        return str(number)

    def number_of(self, collective: str, text: str) -> int | None:
        """The number of an algorithm given by number or name, or None."""
        text = text.strip()
        number = decimal(text)
        if number is not None:
            return number
        if text in ("", "auto", "ignore"):
            return 0
        for n, alg, _gen in self.algorithms.get(collective, []):
            if alg == text:
                return n
        return None

    def check_collective(self, collective: str) -> None:
        if collective not in self.algorithms:
            raise CommodelError(
                f"--collective {collective[:40]}: not advised for {self.label}; choose one of "
                + ", ".join(sorted(self.algorithms))
            )


def installed_prefix(name: str) -> Path | None:
    """Where ``make mpis`` installed ``name`` (``.mpi/NAME`` of the source tree), or None;
    ``COMMODEL_MPI_DIR`` names another folder holding such environments."""
    base = os.environ.get("COMMODEL_MPI_DIR")
    roots = [Path(base)] if base else []
    roots.append(Path(__file__).resolve().parents[3] / ".mpi")
    for root in roots:
        if (root / name / "bin" / "python").exists():
            return root / name
    return None


# Digits read at most: beyond them a number is above every limit an MPI has (2^31 - 1, a
# long's 2^63 - 1), and Python's int() refuses more than 4300.
MAX_DIGITS = 20


def decimal(text: str) -> int | None:
    """``text`` (no spaces, no sign) as a decimal number of ASCII digits, or None.
    ``str.isdigit`` also takes digits that no MPI reads (``'²'``, which ``int()`` refuses,
    ``'٣'``, ``'１'``: Intel MPI 2021.18.1 says "Incorrect adjust value" to each); beyond
    :data:`MAX_DIGITS` digits the value is ``10**MAX_DIGITS``, above every limit."""
    if not (text.isascii() and text.isdigit()):
        return None
    return int(text) if len(text) <= MAX_DIGITS else 10**MAX_DIGITS
