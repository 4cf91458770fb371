"""Field paths and field checks: every platform value is read through these.

:class:`At` is where a value sits (the file and the field path, e.g. ``plogp.g[2]``); each
check takes an ``At`` and the raw YAML value and returns the value in the package's units
(seconds, bytes, bytes per second, seconds per byte) or raises a
:class:`~commodel.errors.PlatformError` that names the file and the field.
"""

from __future__ import annotations

import difflib
import math
import reprlib
from collections.abc import Sequence
from typing import Any, Callable

from ..errors import PlatformError, UnitsError
from ..units import MAX_SECONDS, parse_duration, parse_rate, parse_size, to_float

# Longest text read as a number ("1.5us", "936.4Mbps"); longer text is not one.
MAX_NUMBER_TEXT = 100

# Counts are bounded before anything is sized by them.
# Nodes of a platform: the engine builds every node's links whatever a schedule uses (2**22
# nodes took 2 to 5 s and up to 1.5 GB per model here); 2**20 keeps a model under a second.
MAX_NODES = 2**20
# Ranks: the engine numbers ranks in 32 bits (GOAL's num_ranks is at most 2**32 - 2).
MAX_RANKS = 2**32 - 2
# Other whole numbers the engine takes (cores, flows): 32-bit.
MAX_U32 = 2**32 - 1


class At:
    """Where a value sits: the file and the field path, for error messages."""

    def __init__(self, source: str, path: str = "") -> None:
        self.source = source
        self.path = path

    def key(self, name: str) -> At:
        return At(self.source, f"{self.path}.{name}" if self.path else name)

    def index(self, i: int) -> At:
        return At(self.source, f"{self.path}[{i}]")

    def __str__(self) -> str:
        return f"{self.source}: {self.path}" if self.path else self.source

    def error(self, message: str) -> PlatformError:
        return PlatformError(f"{self}: {message}")


# A bad value is quoted in at most this many characters.
MAX_QUOTE = 80
_SHORT = reprlib.Repr()
_SHORT.maxstring = _SHORT.maxother = _SHORT.maxlong = MAX_QUOTE
_SHORT.maxlevel = 2
_SHORT.maxlist = _SHORT.maxtuple = _SHORT.maxdict = _SHORT.maxset = 4


def describe(value: Any) -> str:
    """A bad value as quoted in a message: its repr, cut short (never the whole of a long
    string or a deep structure)."""
    try:
        text = _SHORT.repr(value)
    except ValueError:  # an int too long to print
        return f"a {value.bit_length()}-bit integer"
    return text if len(text) <= MAX_QUOTE else text[: MAX_QUOTE - 3] + "..."


def mapping(
    at: At,
    value: Any,
    required: Sequence[str] = (),
    optional: Sequence[str] = (),
) -> dict[str, Any]:
    """Check that ``value`` is a mapping with the required keys and no unknown ones."""
    if not isinstance(value, dict):
        raise at.error(f"must be a mapping of keys to values, got {describe(value)}")
    known = [k for k in (*required, *optional) if isinstance(k, str)]
    for key in value:
        if not isinstance(key, str) or key not in known:
            name = key if isinstance(key, str) and len(key) <= MAX_QUOTE else describe(key)
            hint = ""
            close = difflib.get_close_matches(name, known, n=1)
            if close:
                hint = f"; did you mean {close[0]!r}?"
            elif known:
                hint = f"; known keys: {', '.join(known)}"
            raise at.key(name).error(f"unknown key{hint}")
    for key in required:
        if key not in value:
            raise at.key(key).error("missing (required)")
    return value


def number(at: At, value: Any, parse: Callable[[Any], float], what: str) -> float:
    """A finite number read by ``parse`` (a unit parser of :mod:`commodel.units`)."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float, str))
        or (isinstance(value, str) and len(value) > MAX_NUMBER_TEXT)
    ):
        raise at.error(f"must be {what}, got {describe(value)}")
    try:
        parsed = to_float(value) if parse is float and not isinstance(value, str) else parse(value)
    except UnitsError as exc:
        raise at.error(f"must be {what}: {exc}") from None
    except ValueError:  # ``parse`` is float
        raise at.error(f"must be {what}, got {describe(value)}") from None
    if not math.isfinite(parsed):
        raise at.error(f"must be a finite number, got {describe(value)}")
    return parsed


def seconds(at: At, value: Any, positive: bool = False) -> float:
    """A time in seconds (``5e-6`` or ``"5us"``), >= 0 (or > 0 with ``positive``)."""
    parsed = number(at, value, parse_duration, "a time in seconds")
    if positive and parsed <= 0:
        raise at.error(f"must be > 0 seconds, got {describe(value)}")
    if parsed < 0:
        raise at.error(f"must be >= 0 seconds, got {describe(value)}")
    return _in_engine_range(at, value, parsed, "seconds")


def seconds_per_byte(at: At, value: Any) -> float:
    """A per-byte cost in seconds per byte, >= 0."""
    parsed = number(at, value, parse_duration, "a cost in seconds per byte")
    if parsed < 0:
        raise at.error(f"must be >= 0 seconds per byte, got {describe(value)}")
    return _in_engine_range(at, value, parsed, "seconds per byte")


def _in_engine_range(at: At, value: Any, parsed: float, unit: str) -> float:
    """``parsed`` if the engine can hold it in picoseconds (:data:`MAX_SECONDS`)."""
    if parsed > MAX_SECONDS:
        raise at.error(
            f"must be at most {MAX_SECONDS:.7e} {unit} (the engine counts time in 64-bit "
            f"picoseconds), got {describe(value)}"
        )
    return parsed


def rate(at: At, value: Any) -> float:
    """A rate in bytes per second (``117e6`` or ``"936.4Mbps"``), > 0."""
    parsed = number(at, value, parse_rate, "a rate in bytes per second")
    if parsed <= 0:
        raise at.error(f"must be > 0 bytes per second, got {describe(value)}")
    return parsed


def size(at: At, value: Any, allow_none: bool = False) -> int | None:
    """A size in bytes (``65536`` or ``"64KiB"``), >= 0; ``null`` only with ``allow_none``."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str, float)):
        raise at.error(f"must be a size in bytes, got {describe(value)}")
    if isinstance(value, float):
        if not value.is_integer():
            raise at.error(f"must be a whole number of bytes, got {describe(value)}")
        value = int(value)
    if isinstance(value, int) and value < 0:
        raise at.error(f"must be >= 0 bytes, got {describe(value)}")
    try:
        return parse_size(value)
    except UnitsError as exc:
        raise at.error(f"must be a size in bytes: {exc}") from None


def integer(
    at: At, value: Any, minimum: int | None = None, maximum: int | None = None, why: str = ""
) -> int:
    """A whole number, >= ``minimum`` and <= ``maximum`` if given (``why``: the reason for
    the maximum, said in the message)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise at.error(f"must be a whole number, got {describe(value)}")
    if minimum is not None and value < minimum:
        raise at.error(f"must be >= {minimum}, got {describe(value)}")
    if maximum is not None and value > maximum:
        because = f" ({why})" if why else ""
        raise at.error(f"must be at most {maximum}{because}, got {describe(value)}")
    return value


NODES_WHY = "the engine builds every node's links"


def node_count(at: At, value: Any, minimum: int = 1) -> int:
    """A count of nodes (or of racks, leaves, nodes per rack), at most :data:`MAX_NODES`."""
    return integer(at, value, minimum, MAX_NODES, NODES_WHY)


def number_list(at: At, value: Any, item: Callable[[At, Any], Any], min_len: int = 1) -> list:
    """A YAML list whose every element is checked by ``item``."""
    if not isinstance(value, list):
        raise at.error(f"must be a list, got {describe(value)}")
    if len(value) < min_len:
        raise at.error(f"must have at least {min_len} value(s), got {len(value)}")
    return [item(at.index(i), v) for i, v in enumerate(value)]


def same_length(at: At, values: Sequence, reference_at: At, reference: Sequence) -> None:
    """Refuse a list whose length differs from ``reference`` (at ``reference_at``)."""
    if len(values) != len(reference):
        raise at.error(
            f"has {len(values)} values but {reference_at.path} has {len(reference)}; "
            "give one value per entry"
        )


def choice(at: At, value: Any, known: Sequence[str], what: str) -> str:
    """One of ``known``; an error with the closest name otherwise."""
    if isinstance(value, str) and value in known:
        return value
    close = difflib.get_close_matches(str(value), list(known), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise at.error(f"unknown {what} {describe(value)} (supported: {', '.join(known)}){hint}")
