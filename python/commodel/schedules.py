"""Schedules: read and write GOAL, and generate collective schedules.

The work is done by the engine (``commodel._engine``); this module converts arguments
(sizes may be written ``"64KiB"``) and turns engine errors into :mod:`commodel.errors`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .errors import GoalError, engine_errors
from .units import parse_size

if TYPE_CHECKING:
    from ._engine import Schedule


def parse_goal(text: str, filename: str = "<string>") -> Schedule:
    """Parse GOAL text; errors name ``filename:line:column``."""
    from . import _engine

    with engine_errors():
        return _engine.parse_goal(text, filename)


def read_goal(path: str | os.PathLike) -> Schedule:
    """Read a GOAL file; ``"-"`` reads standard input."""
    name = os.fspath(path)
    if name == "-":
        import sys

        return parse_goal(sys.stdin.read(), "<stdin>")
    try:
        with open(name, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        raise GoalError(f"{name}: no such schedule file") from None
    except IsADirectoryError:
        raise GoalError(f"{name}: is a directory, not a GOAL schedule file") from None
    except UnicodeDecodeError:
        raise GoalError(f"{name}: not a UTF-8 text file (a GOAL schedule is text)") from None
    except OSError as exc:
        raise GoalError(f"{name}: cannot read: {exc.strerror or exc}") from None
    return parse_goal(text, name)


def write_goal(schedule: Schedule, path: str | os.PathLike) -> None:
    """Write ``schedule`` as GOAL text that LogGOPSim's txt2bin accepts."""
    text = schedule.to_goal()
    try:
        with open(os.fspath(path), "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise GoalError(f"{os.fspath(path)}: cannot write: {exc.strerror or exc}") from None


def collective(
    name: str,
    ranks: int,
    size: int | str,
    root: int = 0,
    seed: int = 0,
    segment: int | str | None = None,
    degree: int = 1,
    splits: int = 2,
    max_requests: int = 0,
    reduce_ns_per_byte: float = 0.0,
) -> Schedule:
    """Generate the schedule of collective ``name`` on ``ranks`` ranks, ``size`` bytes.

    ``size`` is the per-rank message size as the collective defines it (see
    ``commodel schedule --list``); ``segment`` is the pipeline segment size of segmented
    algorithms, ``degree`` the number of passes of ``random-pairs``, ``splits`` the number
    of sub-gathers of ``gather-split``, ``max_requests`` the limit of outstanding requests
    of ``alltoall-linear-sync`` (0: unlimited), ``reduce_ns_per_byte`` the cost of the
    reduction operation of the allreduce algorithms (a ``calc`` per reduced block; 0: none).
    """
    from . import _engine

    nbytes = parse_size(size)
    seg = None if segment is None else parse_size(segment)
    with engine_errors():
        return _engine.collective(
            name,
            ranks,
            nbytes,
            root=root,
            seed=seed,
            segment=seg,
            degree=degree,
            splits=splits,
            max_requests=max_requests,
            reduce_ns_per_byte=reduce_ns_per_byte,
        )


def collective_names() -> list[tuple[str, str]]:
    """The catalog of collective generators: ``(name, one-line summary)``."""
    from . import _engine

    with engine_errors():
        return list(_engine.collective_names())
