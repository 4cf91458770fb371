"""Helpers shared by the subcommands: argument types and output files."""

from __future__ import annotations

import argparse
import sys

from ..errors import CommodelError, UnitsError
from ..units import parse_size


def size_arg(text: str) -> int:
    """argparse type: a size in bytes, ``65536`` or ``64KiB``."""
    try:
        return parse_size(text)
    except UnitsError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def nonnegative_int(text: str) -> int:
    """argparse type: a whole number >= 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def positive_int(text: str) -> int:
    """argparse type: a whole number >= 1."""
    value = nonnegative_int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def write_output(text: str, path: str | None) -> None:
    """Write ``text`` to ``path``, or to standard output if ``path`` is None or ``-``."""
    if path is None or path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise CommodelError(f"{path}: cannot write: {exc.strerror or exc}") from None
