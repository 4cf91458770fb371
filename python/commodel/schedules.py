"""Schedules: read and write GOAL, and generate collective schedules.

The work is done by the engine (``commodel._engine``); this module converts arguments
(sizes may be written ``"64KiB"``); the engine raises :mod:`commodel.errors` classes itself.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from .errors import CollectiveError, GoalError, UnitsError
from .units import parse_size

# The engine's integer limits (u32 for rank counts, roots and counts; u64 for seeds).
MAX_U32 = 2**32 - 1
MAX_SEED = 2**64 - 1

if TYPE_CHECKING:
    from ._engine import Schedule


def parse_goal(text: str, filename: str = "<string>") -> Schedule:
    """Parse GOAL text; errors name ``filename:line:column``."""
    from . import _engine

    if not isinstance(text, str):
        raise GoalError(f"{filename}: GOAL text must be a str, got {type(text).__name__}")
    try:
        return _engine.parse_goal(text, filename)
    except UnicodeEncodeError as exc:  # a lone surrogate, e.g. from surrogateescape
        line = text.count("\n", 0, exc.start) + 1
        raise GoalError(f"{filename}:{line}: not UTF-8 text (a GOAL schedule is text)") from None


def read_goal(path: str | os.PathLike[str]) -> Schedule:
    """Read a schedule file; ``"-"`` reads GOAL text from standard input.

    A file may hold GOAL text (read in chunks: memory follows the schedule, not the
    text) or a binary schedule written by LogGOPSim's ``txt2bin``; the engine tells
    them apart by content. Errors name ``file:line:column`` (text) or the byte offset
    (binary).
    """
    from . import _engine

    name = os.fspath(path)
    if name == "-":
        return parse_goal(_read_stdin(), "<stdin>")
    if os.path.isdir(name):
        raise GoalError(f"{name}: is a directory, not a GOAL schedule file")
    if not os.path.exists(name):
        raise GoalError(f"{name}: no such schedule file")
    return _engine.read_goal(name)


def _read_stdin() -> str:
    """Standard input as UTF-8 text; binary input is a :class:`GoalError`."""
    import sys

    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # a text stream without bytes underneath (e.g. io.StringIO)
        return sys.stdin.read()
    data: bytes = stream.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise GoalError(
            f"<stdin>:{line}: not UTF-8 text (byte {exc.start}; a GOAL schedule is text)"
        ) from None


def write_goal(schedule: Schedule, path: str | os.PathLike[str]) -> None:
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
    fanout: int | None = None,
) -> Schedule:
    """Generate the schedule of collective ``name`` on ``ranks`` ranks, ``size`` bytes.

    ``size`` is the per-rank message size as the collective defines it (see
    ``commodel schedule --list``); ``segment`` is the pipeline segment size of segmented
    algorithms, ``degree`` the number of passes of ``random-pairs``, ``splits`` the number
    of sub-gathers of ``gather-split``, ``max_requests`` the limit of outstanding requests
    of ``alltoall-linear-sync`` (0: unlimited; for ``scatter-linear-nb``: every send to a
    multiple of it is blocking), ``reduce_ns_per_byte`` the cost of the
    reduction operation of the allreduce algorithms (a ``calc`` per reduced block; 0: none),
    ``fanout`` the number of chains of ``bcast-chain`` and the radix of ``bcast-knomial``
    (default 4, Open MPI's).
    """
    from . import _engine

    args = _collective_args(
        name,
        ranks,
        size,
        root,
        seed,
        segment,
        degree,
        splits,
        max_requests,
        reduce_ns_per_byte,
        fanout,
    )
    return _engine.collective(name, ranks, **args)


def write_collective(
    name: str,
    ranks: int,
    size: int | str,
    path: str | os.PathLike[str] | None = None,
    root: int = 0,
    seed: int = 0,
    segment: int | str | None = None,
    degree: int = 1,
    splits: int = 2,
    max_requests: int = 0,
    reduce_ns_per_byte: float = 0.0,
    fanout: int | None = None,
) -> tuple[int, int, int]:
    """Write collective ``name`` as GOAL text to ``path`` (None or ``"-"``: standard output).

    The same text as ``collective(...).to_goal()``, written by the engine rank by rank
    while it generates: memory does not grow with the schedule, and the text never
    passes through Python as a whole. The file is created only once the arguments are
    known to be valid. Arguments as :func:`collective`. Returns ``(num_ranks, num_ops,
    bytes_sent)``.
    """
    import sys

    from . import _engine

    args = _collective_args(
        name,
        ranks,
        size,
        root,
        seed,
        segment,
        degree,
        splits,
        max_requests,
        reduce_ns_per_byte,
        fanout,
    )
    target = None if path is None else os.fspath(path)
    if target is not None and target != "-":
        return _engine.write_collective(name, ranks, path=target, **args)
    sys.stdout.flush()
    binary = getattr(sys.stdout, "buffer", None)
    if binary is None:  # a text stream without bytes underneath (e.g. io.StringIO)
        written = _engine.write_collective(
            name, ranks, write=lambda chunk: sys.stdout.write(chunk.decode()), **args
        )
    else:
        written = _engine.write_collective(name, ranks, write=binary.write, **args)
        binary.flush()
    return written


def _collective_args(
    name: object,
    ranks: object,
    size: int | str,
    root: object,
    seed: object,
    segment: int | str | None,
    degree: object,
    splits: object,
    max_requests: object,
    reduce_ns_per_byte: object,
    fanout: object = None,
) -> dict[str, Any]:
    """Check the arguments of :func:`collective`; the engine's keyword arguments after
    ``name`` and ``ranks`` (sizes in bytes)."""
    if not isinstance(name, str):
        raise CollectiveError(f"collective: name must be a str, got {type(name).__name__}")
    _whole("ranks", ranks, 1, MAX_U32)
    _whole("root", root, 0, MAX_U32)
    _whole("seed", seed, 0, MAX_SEED)
    _whole("degree", degree, 1, MAX_U32)
    _whole("splits", splits, 1, MAX_U32)
    _whole("max_requests", max_requests, 0, MAX_U32)
    if fanout is not None:
        _whole("fanout", fanout, 1, MAX_U32)
    if isinstance(reduce_ns_per_byte, bool) or not isinstance(reduce_ns_per_byte, (int, float)):
        raise CollectiveError(
            f"collective: reduce_ns_per_byte must be a number, "
            f"got {type(reduce_ns_per_byte).__name__}"
        )
    if not 0 <= reduce_ns_per_byte < float("inf"):
        raise CollectiveError(
            f"collective: reduce_ns_per_byte must be finite and >= 0, got {reduce_ns_per_byte}"
        )
    return {
        "size": _size("size", size),
        "root": root,
        "seed": seed,
        "segment": None if segment is None else _size("segment", segment),
        "degree": degree,
        "splits": splits,
        "max_requests": max_requests,
        "reduce_ns_per_byte": reduce_ns_per_byte,
        "fanout": fanout,
    }


def _whole(argument: str, value: object, low: int, high: int) -> None:
    """A :class:`CollectiveError` naming ``argument`` unless ``low <= value <= high``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise CollectiveError(
            f"collective: {argument} must be a whole number, got {type(value).__name__}"
        )
    if not low <= value <= high:
        shown = str(value) if abs(value) < 10**24 else f"{value:.3e}"
        raise CollectiveError(
            f"collective: {argument} must be a whole number from {low} to {high}, got {shown}"
        )


def _size(argument: str, value: object) -> int:
    try:
        return parse_size(value)  # type: ignore[arg-type]
    except UnitsError as exc:
        raise CollectiveError(f"collective: {argument}: {exc}") from None


def collective_names() -> list[tuple[str, str]]:
    """The catalog of collective generators: ``(name, one-line summary)``."""
    from . import _engine

    return list(_engine.collective_names())
