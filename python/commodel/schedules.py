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


def collective(name: str, ranks: int, size: int | str, **options: Any) -> Schedule:
    """Generate the schedule of collective ``name`` on ``ranks`` ranks, ``size`` bytes.

    ``size`` is the per-rank message size as the collective defines it (see
    ``commodel schedule --list``). The keyword ``options`` are those of
    :func:`collective_options` (the engine declares them; ``commodel schedule --help``
    shows them with their defaults): ``root`` of rooted collectives, ``seed`` and
    ``degree`` (passes) of ``random-pairs``, ``segment`` (a size, e.g. ``"8KiB"``) of
    segmented algorithms, ``splits`` (sub-gathers) of ``gather-split``, ``max_requests``
    (outstanding requests of ``alltoall-linear-sync``, 0: unlimited; for
    ``scatter-linear-nb``: every send to a multiple of it is blocking), ``fanout`` (chains
    of ``bcast-chain``, radix of ``bcast-knomial``; default 4, Open MPI's) and
    ``reduce_ns_per_byte`` (the cost of the reduction of the allreduce algorithms, a
    ``calc`` per reduced block; 0: none).
    """
    from . import _engine

    args = _collective_args(name, ranks, size, options)
    return _engine.collective(name, ranks, **args)


def write_collective(
    name: str,
    ranks: int,
    size: int | str,
    path: str | os.PathLike[str] | None = None,
    **options: Any,
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

    args = _collective_args(name, ranks, size, options)
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


def collective_options() -> list[tuple[str, str, int, int, int | float | None, str, str]]:
    """The options of every collective generator, as the engine declares them: ``(name,
    kind, min, max, default, metavar, help)``, kind one of ``"u32"``, ``"u64"``,
    ``"bytes"`` (a size: ``"64KiB"`` is taken) and ``"f64"``; default None where the
    generator decides."""
    from . import _engine

    return list(_engine.collective_options())


def _collective_args(
    name: object, ranks: object, size: int | str, options: dict[str, Any]
) -> dict[str, Any]:
    """Check the arguments of :func:`collective` against :func:`collective_options`; the
    engine's keyword arguments after ``name`` and ``ranks`` (sizes in bytes)."""
    if not isinstance(name, str):
        raise CollectiveError(f"collective: name must be a str, got {type(name).__name__}")
    _whole("ranks", ranks, 1, MAX_U32)
    specs = {spec[0]: spec for spec in collective_options()}
    unknown = sorted(set(options) - set(specs))
    if unknown:
        raise CollectiveError(
            f"collective: unknown option {unknown[0]!r}; options: {', '.join(specs)}"
        )
    args: dict[str, Any] = {"size": _size("size", size)}
    for key, kind, low, high, default, _metavar, _help in specs.values():
        value = options.get(key, default)
        if value is None and default is None:
            args[key] = None
        elif kind == "bytes":
            args[key] = _size(key, value)
        elif kind == "f64":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise CollectiveError(
                    f"collective: {key} must be a number, got {type(value).__name__}"
                )
            if not 0 <= value < float("inf"):
                raise CollectiveError(f"collective: {key} must be finite and >= 0, got {value}")
            args[key] = value
        else:
            _whole(key, value, low, high)
            args[key] = value
    check_segments(name, ranks, args["size"], args.get("segment"))  # type: ignore[arg-type]
    return args


# Generators whose segments each wait on the earlier ones: about 2 s^2 dependencies for s
# segments (bcast-pipeline at 8 KiB segments and 64 MiB: 0.5 GB in memory, 0.7 GB of GOAL
# text), and the segment each uses without one.
SEGMENTED = {
    "bcast-pipeline": 8192,
    "bcast-binomial": None,
    "bcast-chain": None,
    "bcast-binary-tree": None,
    "bcast-knomial": None,
}


def check_segments(name: str, ranks: int, size: int, segment: int | None) -> None:
    """Refuse a segmented bcast whose dependencies would pass
    :data:`~commodel.schedule_cost.MAX_SCHEDULE_UNITS` before anything is generated."""
    from .schedule_cost import MAX_SCHEDULE_UNITS

    if name not in SEGMENTED:
        return
    seg = segment if segment else SEGMENTED[name]
    if not seg or size <= seg:
        return
    s = -(-size // seg)
    units = 2 * s * s + 4 * ranks * s
    if units > MAX_SCHEDULE_UNITS:
        raise CollectiveError(
            f"collective: {name} of {size} bytes in segments of {seg} would hold {s} segments "
            f"and about {units:.3g} dependencies, more than {MAX_SCHEDULE_UNITS}; give a "
            "larger segment or a smaller size"
        )


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
