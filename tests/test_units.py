"""Sizes, durations and rates: parsing and printing (commodel.units)."""

from __future__ import annotations

import pytest

from commodel.errors import CommodelError, UnitsError
from commodel.units import (
    MAX_SECONDS,
    format_duration,
    format_size,
    parse_duration,
    parse_rate,
    parse_size,
    ps_to_seconds,
    seconds_to_ps,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("65536", 65536),
        (65536, 65536),
        ("0", 0),
        ("100B", 100),
        ("64KiB", 65536),
        ("1 MiB", 1048576),
        ("2kB", 2000),
        ("2KB", 2000),
        ("8b", 8),
        ("1MB", 1000000),
        ("1GB", 1000000000),
        ("1GiB", 1073741824),
    ],
)
def test_parse_size(text: str | int, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("64K", "ambiguous size '64K': write 64KiB (powers of 1024) or 64kB"),
        ("1M", "ambiguous size '1M': write 1MiB (powers of 1024) or 1MB"),
        ("64XB", "unknown size unit 'XB'"),
        ("64Kb", "unknown size unit 'Kb' in '64Kb' (known, case-sensitive"),
        ("64kib", "unknown size unit 'kib'"),
        ("1mb", "unknown size unit 'mb'"),
        ("1.5KiB", "size '1.5KiB': write a whole number before the unit (e.g. 1536)"),
        ("1e3", "write a whole number before the unit (e.g. 1000)"),
        ("1e400", "too large"),
        ("18446744073709551616", "too large (at most 2**64 - 1 bytes)"),
        (2**70, "too large"),
        ("-5", "must be >= 0"),
        (-5, "must be >= 0 bytes, got -5"),
        ("1.5B", "not a whole number of bytes"),
        ("lots", "cannot read 'lots' as a size"),
        ("", "cannot read '' as a size"),
    ],
)
def test_parse_size_errors(text: str | int, message: str) -> None:
    with pytest.raises(UnitsError) as info:
        parse_size(text)
    assert message in str(info.value)
    assert isinstance(info.value, CommodelError)


def test_parse_size_rejects_bool() -> None:
    with pytest.raises(UnitsError):
        parse_size(True)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1.5us", 1.5e-6),
        ("1.5 µs", 1.5e-6),
        ("200ms", 0.2),
        ("5000ns", 5e-6),
        ("3ps", 3e-12),
        ("2", 2.0),
        ("2s", 2.0),
        (5e-6, 5e-6),
        ("5e-6", 5e-6),
    ],
)
def test_parse_duration(text: str | float, expected: float) -> None:
    assert parse_duration(text) == pytest.approx(expected, rel=1e-15)


def test_parse_duration_unknown_unit() -> None:
    with pytest.raises(UnitsError, match="unknown time unit 'parsecs'"):
        parse_duration("5 parsecs")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("936.4Mbps", 117.05e6),
        ("1Gbps", 125e6),
        ("1GB/s", 1e9),
        ("1 MiB/s", 1048576.0),
        ("117e6", 117e6),
        (117e6, 117e6),
    ],
)
def test_parse_rate(text: str | float, expected: float) -> None:
    assert parse_rate(text) == pytest.approx(expected, rel=1e-12)


def test_parse_rate_unknown_unit() -> None:
    with pytest.raises(UnitsError, match="unknown rate unit 'furlongs'"):
        parse_rate("3 furlongs")


def test_picoseconds_round_trip() -> None:
    assert seconds_to_ps(1.5e-6) == 1_500_000
    assert seconds_to_ps(8e-9) == 8_000
    assert seconds_to_ps(0.2) == 200_000_000_000
    assert ps_to_seconds(543_780_000) == pytest.approx(543.78e-6, rel=1e-15)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (543780e-9, "543.780 us"),
        (0.2, "200.000 ms"),
        (1.5, "1.500 s"),
        (12e-9, "12.000 ns"),
        (0.0, "0.000 ns"),
    ],
)
def test_format_duration(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


def test_format_duration_forced_unit() -> None:
    assert format_duration(0.2, "us") == "200000.000 us"


@pytest.mark.parametrize(
    ("nbytes", "text"),
    [(100, "100 B"), (1024, "1 KiB"), (1536, "1.5 KiB"), (1048576, "1 MiB"), (65536, "64 KiB")],
)
def test_format_size(nbytes: int, text: str) -> None:
    assert format_size(nbytes) == text


@pytest.mark.parametrize("seconds", [1e300, float("inf"), float("nan"), -1e8, 18446744.5])
def test_picoseconds_beyond_64_bits_are_refused(seconds: float) -> None:
    with pytest.raises(UnitsError, match="beyond the engine's range"):
        seconds_to_ps(seconds)


def test_picoseconds_up_to_64_bits() -> None:
    assert MAX_SECONDS == 18446744.0
    assert seconds_to_ps(MAX_SECONDS) == 18_446_744_000_000_000_000 <= 2**64 - 1
    assert seconds_to_ps(-MAX_SECONDS) == -18_446_744_000_000_000_000
