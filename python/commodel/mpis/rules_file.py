"""Reading a rules file a user hands us, for any MPI (Open MPI's rules, MPICH's JSON
tuning file, Intel MPI's settings): at most :data:`MAX_RULES_BYTES`, and a clear error for
a missing, unreadable or larger file."""

from __future__ import annotations

import os

from ..errors import CommodelError

# Bytes of a rules file read: far above any real one, read in under 2 s.
MAX_RULES_BYTES = 4 * 2**20


def read_rules_bytes(path: str | os.PathLike) -> bytes:
    """The bytes of a rules file (Open MPI's rules, MPICH's JSON tuning file, Intel MPI's
    settings), at most
    :data:`MAX_RULES_BYTES`; a clear error for a missing, unreadable or larger file."""
    name = os.fspath(path)
    try:
        with open(name, "rb") as handle:
            data = handle.read(MAX_RULES_BYTES + 1)
    except FileNotFoundError:
        raise CommodelError(f"{name}: no such rules file") from None
    except IsADirectoryError:
        raise CommodelError(f"{name}: is a directory, not a rules file") from None
    except OSError as exc:
        raise CommodelError(f"{name}: cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_RULES_BYTES:
        raise CommodelError(
            f"{name}: larger than {MAX_RULES_BYTES // 2**20} MiB; a rules file is at most "
            f"{MAX_RULES_BYTES} bytes (ours are a few kB; 1 MB is read in 0.4 s)"
        )
    return data
