"""Parsing and printing of sizes, durations and rates.

Sizes: the grammar of GOAL schedules: a whole number of bytes, with an optional suffix,
case-sensitive. Binary suffixes are powers of 1024 (``KiB``, ``MiB``, ``GiB``, ``TiB``),
decimal ones powers of 1000 (``kB``/``KB``, ``MB``, ``GB``, ``TB``); ``B``, ``b`` or no
suffix means bytes. A bare ``k``/``M``/``G`` is refused as ambiguous, ``Kb``/``mb`` as
possibly bits.

Durations: seconds, with an optional unit ``s``, ``ms``, ``us`` (or ``µs``), ``ns``, ``ps``.

Rates: bytes per second, with an optional unit: ``B/s``, ``kB/s``, ``MB/s``, ``GB/s``,
``KiB/s``, ``MiB/s``, ``GiB/s``, or bits per second ``bps``, ``kbps``, ``Mbps``, ``Gbps``
(bit rates are divided by 8).

Inside the code quantities are plain numbers: sizes in bytes (int), durations in seconds
(float), rates in bytes per second (float); the engine takes integer picoseconds, at most
2**64 - 1 (:data:`MAX_SECONDS`).
"""

from __future__ import annotations

import math
import re

from .errors import UnitsError

PS_PER_SECOND = 10**12

# The engine counts time in unsigned 64-bit picoseconds (at most 2**64 - 1, 18446744.07 s):
# the longest time a platform may give, in whole seconds (about 213 days). A per-byte cost
# is bounded the same way.
MAX_SECONDS = float((2**64 - 1) // PS_PER_SECOND)

# The units of GOAL sizes (crates/commodel-engine/src/goal/parse.rs), case-sensitive.
_SIZE_SUFFIXES = {
    "": 1,
    "b": 1,
    "B": 1,
    "KiB": 1024,
    "MiB": 1024**2,
    "GiB": 1024**3,
    "TiB": 1024**4,
    "kB": 1000,
    "KB": 1000,
    "MB": 1000**2,
    "GB": 1000**3,
    "TB": 1000**4,
}

# The largest size the engine and GOAL take (u64).
MAX_SIZE = 2**64 - 1

_DURATION_UNITS = {
    "": 1.0,
    "s": 1.0,
    "ms": 1e-3,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ns": 1e-9,
    "ps": 1e-12,
}

_RATE_UNITS = {
    "": 1.0,
    "b/s": 1.0,
    "kb/s": 1e3,
    "mb/s": 1e6,
    "gb/s": 1e9,
    "kib/s": 1024.0,
    "mib/s": 1024.0**2,
    "gib/s": 1024.0**3,
    "bps": 1 / 8,
    "kbps": 1e3 / 8,
    "mbps": 1e6 / 8,
    "gbps": 1e9 / 8,
}

_NUMBER_UNIT = re.compile(
    r"^\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*([^\s\d].*?)?\s*$"
)


def _split(text: str, what: str) -> tuple[str, str]:
    match = _NUMBER_UNIT.match(text)
    if match is None:
        raise UnitsError(f"cannot read {text!r} as {what}")
    return match.group(1), (match.group(2) or "")


def _quoted(value: object, limit: int = 40) -> str:
    """``repr(value)``, cut to about ``limit`` characters (messages never quote a whole value)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 5] + "...'" + f" ({len(text)} chars)"


def parse_size(value: str | int) -> int:
    """Return a size in bytes from ``65536``, ``"64KiB"``, ``"1 MiB"``, ``"2kB"``, ``"1GB"``.

    The grammar of GOAL schedules (docs/formats.md), everywhere sizes are read (command
    line, platform and cluster files, the Python API): a whole number, optional spaces and
    a unit, case-sensitive: ``b`` or ``B`` (bytes), ``KiB``, ``MiB``, ``GiB``, ``TiB``
    (powers of 1024), ``kB`` or ``KB``, ``MB``, ``GB``, ``TB`` (powers of 1000). A bare
    number is bytes. ``64Kb`` or ``1mb`` (bits?), ``64K`` (which power?), ``1.5KiB`` and
    sizes above 2**64 - 1 bytes are errors.
    """
    if isinstance(value, bool):
        raise UnitsError(f"cannot read {value!r} as a size in bytes")
    if isinstance(value, int):
        if value < 0:
            raise UnitsError(f"a size must be >= 0 bytes, got {value}")
        if value > MAX_SIZE:
            bits = value.bit_length()
            shown = f"{value:.3e} bytes" if bits < 1000 else f"of a {bits}-bit number of bytes"
            raise UnitsError(f"size {shown} is too large (at most 2**64 - 1 bytes)")
        return value
    if not isinstance(value, str):
        raise UnitsError(f"cannot read {_quoted(value)} as a size in bytes")
    shown = _quoted(value)
    if len(value) > 100:
        raise UnitsError(f"cannot read {shown} as a size in bytes (e.g. 65536, 64KiB, 2kB)")
    number, unit = _split(value, "a size in bytes (e.g. 65536, 64KiB, 1MiB, 2kB)")
    if unit not in _SIZE_SUFFIXES:
        if unit.lower() in ("k", "m", "g", "t"):
            upper = unit.upper()
            raise UnitsError(
                f"ambiguous size {shown}: write {number}{upper}iB (powers of 1024) "
                f"or {number}{'k' if upper == 'K' else upper}B (powers of 1000)"
            )
        raise UnitsError(
            f"unknown size unit {_quoted(unit, 20)} in {shown} (known, case-sensitive: B, KiB, "
            "MiB, GiB, TiB, kB or KB, MB, GB, TB; a lowercase b after a prefix would be bits)"
        )
    factor = _SIZE_SUFFIXES[unit]
    if number.startswith("-"):
        raise UnitsError(f"a size must be >= 0 bytes, got {shown}")
    if not number.isdigit():
        scaled = float(number) * factor
        if not math.isfinite(scaled) or scaled > MAX_SIZE:
            raise UnitsError(f"size {shown} is too large (at most 2**64 - 1 bytes)")
        if scaled != math.floor(scaled):
            raise UnitsError(f"size {shown} is not a whole number of bytes")
        raise UnitsError(
            f"size {shown}: write a whole number before the unit (e.g. {int(scaled)}), "
            "as GOAL schedules do"
        )
    nbytes = int(number) * factor
    if nbytes > MAX_SIZE:
        raise UnitsError(f"size {shown} is too large (at most 2**64 - 1 bytes)")
    return nbytes


def to_float(value: int | float) -> float:
    """``value`` as a float; an integer too large for one (beyond about 1.8e308) is a
    :class:`UnitsError`, not Python's OverflowError. NaN and infinities pass (callers that
    need a finite number check it and name their field)."""
    try:
        return float(value)
    except OverflowError:
        bits = value.bit_length() if isinstance(value, int) else 0
        raise UnitsError(f"a {bits}-bit integer is too large (at most about 1.8e308)") from None


def parse_duration(value: str | float | int) -> float:
    """Return a duration in seconds from ``1.5e-6``, ``"1.5us"``, ``"200 ms"``, ``"5000ns"``."""
    if isinstance(value, bool):
        raise UnitsError(f"cannot read {value!r} as a duration")
    if isinstance(value, (int, float)):
        return to_float(value)
    if not isinstance(value, str):
        raise UnitsError(f"cannot read {_quoted(value)} as a duration")
    number, unit = _split(value, "a duration (e.g. 1.5e-6, 1.5us, 200ms)")
    factor = _DURATION_UNITS.get(unit.lower() if unit != "µs" else unit)
    if factor is None:
        raise UnitsError(f"unknown time unit {unit!r} in {value!r} (known: s, ms, us, ns, ps)")
    return float(number) * factor


def parse_rate(value: str | float | int) -> float:
    """Return a rate in bytes per second from ``117e6``, ``"936.4 Mbps"``, ``"1GB/s"``."""
    if isinstance(value, bool):
        raise UnitsError(f"cannot read {value!r} as a rate")
    if isinstance(value, (int, float)):
        return to_float(value)
    if not isinstance(value, str):
        raise UnitsError(f"cannot read {_quoted(value)} as a rate")
    number, unit = _split(value, "a rate (e.g. 117e6, 936.4Mbps, 1GB/s)")
    factor = _RATE_UNITS.get(unit.lower())
    if factor is None:
        raise UnitsError(
            f"unknown rate unit {unit!r} in {value!r} (known: B/s, kB/s, MB/s, GB/s, KiB/s, "
            "MiB/s, GiB/s, bps, kbps, Mbps, Gbps)"
        )
    return float(number) * factor


def seconds_to_ps(seconds: float) -> int:
    """Seconds to integer picoseconds, rounded to the nearest picosecond.

    A time that is not finite or longer than :data:`MAX_SECONDS` is a :class:`UnitsError`.
    """
    if not abs(seconds) <= MAX_SECONDS:  # also refuses nan
        raise UnitsError(
            f"{seconds:g} seconds is beyond the engine's range (at most {MAX_SECONDS:.7e} "
            "seconds: the engine counts time in 64-bit picoseconds)"
        )
    return int(round(seconds * PS_PER_SECOND))


def ps_to_seconds(ps: int) -> float:
    """Integer picoseconds to seconds."""
    return ps / PS_PER_SECOND


# (unit, seconds per unit), largest first
_DISPLAY_UNITS = (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9))


def duration_unit(seconds: float) -> tuple[str, float]:
    """The display unit for ``seconds``: s, ms, us or ns, so the number is >= 1 (if possible)."""
    magnitude = abs(seconds)
    for name, scale in _DISPLAY_UNITS:
        if magnitude >= scale:
            return name, scale
    return "ns", 1e-9


def format_duration(seconds: float, unit: str | None = None, decimals: int = 3) -> str:
    """``0.00054378`` -> ``"543.780 us"``; ``unit`` forces one of s, ms, us, ns."""
    if unit is None:
        unit, scale = duration_unit(seconds)
    else:
        scale = dict(_DISPLAY_UNITS)[unit]
    return f"{seconds / scale:.{decimals}f} {unit}"


def format_size(nbytes: int) -> str:
    """``65536`` -> ``"64 KiB"``, ``1536`` -> ``"1.5 KiB"``, ``100`` -> ``"100 B"``."""
    for name, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if nbytes >= scale:
            value = nbytes / scale
            text = f"{value:.0f}" if value == int(value) else f"{value:.2f}".rstrip("0")
            return f"{text} {name}"
    return f"{nbytes} B"
