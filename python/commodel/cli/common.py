"""Helpers shared by the subcommands: argument types and output files."""

from __future__ import annotations

import argparse
import os
import sys

from ..errors import CommodelError, UnitsError
from ..schedules import MAX_SEED
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


def _items(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def size_list(text: str) -> list[int]:
    """argparse type: sizes separated by commas, ``0,8KiB,32KiB``."""
    return [size_arg(x) for x in _items(text)]


def add_buffer_option(p: argparse.ArgumentParser) -> None:
    """``--buffer`` of ``fit`` and ``calibrate``: the switches' port buffers, given by the user."""
    p.add_argument(
        "--buffer",
        type=size_list,
        metavar="BYTES[,BYTES...]",
        help="port buffer capacity of the switches, where known: one size or one per height "
        "h = 1..D of the fitted network (racks: the port toward a node, the rack's uplink), "
        "written as network.buffer with tcp.rto_rule: buffer, instead of what a buffer "
        "campaign measured",
    )


def int_list(text: str) -> list[int]:
    """argparse type: whole numbers >= 0 separated by commas, ``3,4,8``."""
    return [nonnegative_int(x) for x in _items(text)]


def seed_arg(text: str) -> int:
    """argparse type of every ``--seed``: a whole number from 0 to 2**64 - 1."""
    value = nonnegative_int(text)
    if value > MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be at most 2**64 - 1, got {text[:30]}")
    return value


def check_seed_range(seed: int, count: int, flag: str) -> None:
    """The seeds ``seed .. seed + count - 1`` of ``count`` runs must all be valid seeds."""
    if seed + count - 1 > MAX_SEED:
        raise CommodelError(
            f"--seed {seed} with {flag} {count}: the last seed would pass 2**64 - 1"
        )


def check_output_file(path: str | None, flag: str) -> None:
    """Refuse an output file that cannot be written, before any work is done.

    ``None`` and ``-`` (standard output) pass; otherwise the directory must exist and be
    writable, and the path must not be a directory or a read-only file.
    """
    if path is None or path == "-":
        return
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise CommodelError(f"{flag} {path}: is a directory, not a file")
    if not os.path.isdir(directory):
        raise CommodelError(f"{flag} {path}: directory {directory} does not exist")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise CommodelError(f"{flag} {path}: directory {directory} is not writable")
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise CommodelError(f"{flag} {path}: the file exists and is not writable")


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


def add_jobs_option(parser: argparse.ArgumentParser) -> None:
    """``--jobs N``: how many predictions run at once, and ``--executor``: on threads or on
    MPI workers (commodel.parallel)."""
    parser.add_argument(
        "--jobs",
        "-j",
        type=positive_int,
        metavar="N",
        help="run up to N independent predictions at once (default: the usable cores; "
        "1: one after the other); the output is the same for every N",
    )
    parser.add_argument(
        "--executor",
        choices=["threads", "mpi"],
        default="threads",
        help="where the predictions run: threads of this process (default), or mpi: the "
        "workers of 'mpiexec -n N python -m mpi4py.futures -m commodel ...' on any hosts "
        "(N - 1 workers; --jobs is then ignored); the output is the same",
    )
