"""The MPI library this process has loaded, for the C functions mpi4py does not wrap (the
MPI tool interface): mpi4py's wheel loads the library privately, so its symbols are not
among the process's global ones."""

from __future__ import annotations

import ctypes
from typing import Any


def loaded_libmpi_path() -> str | None:
    """The file of the MPI library this process has loaded, or None."""
    import re

    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            paths = [line.split()[-1] for line in maps if re.search(r"/libmpi\.so", line)]
    except OSError:
        return None
    return paths[0] if paths else None


def loaded_libmpi() -> Any:
    """The MPI library this process has loaded (mpi4py's wheel loads it privately, so it is
    not among the global symbols), as a ctypes library, or None."""
    for path in [loaded_libmpi_path(), None]:
        try:
            lib = ctypes.CDLL(path)
            lib.MPI_T_init_thread  # noqa: B018 (the symbol must be there)
            return lib
        except (OSError, AttributeError):
            continue
    return None
