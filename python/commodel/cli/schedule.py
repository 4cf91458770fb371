"""``commodel schedule``: write a collective's schedule as GOAL text."""

from __future__ import annotations

import argparse
import sys

from .common import (
    check_output_file,
    nonnegative_int,
    positive_int,
    seed_arg,
    size_arg,
    write_output,
)

HELP = "write a collective operation's messages as a GOAL schedule"

EPILOG = """\
examples:
  commodel schedule --list
  commodel schedule alltoall-xor-pairwise --ranks 32 --size 64KiB -o a2a.goal
  commodel schedule bcast-pipeline --ranks 16 --size 1MiB --segment 64KiB
  commodel schedule random-pairs --ranks 64 --size 1MiB --degree 4 --seed 7

The output is GOAL text as LogGOPSim's txt2bin reads it (docs/formats.md), written
rank by rank while it is generated: memory does not grow with the schedule.
"""


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "schedule",
        help=HELP,
        description=HELP + ".",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("name", nargs="?", metavar="NAME", help="collective, see --list")
    parser.add_argument("--list", action="store_true", help="list the collectives and exit")
    parser.add_argument("--ranks", "-P", type=positive_int, metavar="P", help="number of ranks")
    parser.add_argument(
        "--size",
        "-m",
        type=size_arg,
        metavar="BYTES",
        help="message size: 65536, 64KiB, 2kB (the units of GOAL, case-sensitive)",
    )
    add_option_arguments(parser)
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    parser.set_defaults(func=run, _parser=parser)
    return parser


def run(args: argparse.Namespace) -> int:
    from ..report.tables import format_table
    from ..schedules import collective_names, collective_options, write_collective
    from ..units import format_size

    if args.list:
        rows = collective_names()
        write_output(format_table(["name", "summary"], rows, align="ll") + "\n", args.output)
        return 0
    parser: argparse.ArgumentParser = args._parser
    missing = [
        flag
        for flag, value in (("NAME", args.name), ("--ranks", args.ranks), ("--size", args.size))
        if value is None
    ]
    if missing:
        parser.error(f"missing {', '.join(missing)} (or use --list)")
    check_output_file(args.output, "-o")
    options = {spec[0]: getattr(args, spec[0]) for spec in collective_options()}
    num_ranks, num_ops, bytes_sent = write_collective(
        args.name, args.ranks, args.size, args.output, **options
    )
    if args.output not in (None, "-"):
        print(
            f"wrote {args.output}: {args.name}, {num_ranks} ranks, "
            f"{num_ops} operations, {format_size(bytes_sent)} sent",
            file=sys.stderr,
        )
    return 0


def add_option_arguments(parser: argparse.ArgumentParser) -> None:
    """One ``--name`` per collective option, as the engine declares them
    (:func:`commodel.schedules.collective_options`)."""
    from ..schedules import collective_options

    types = {"u64": seed_arg, "bytes": size_arg, "f64": float}
    for name, kind, low, _high, default, metavar, text in collective_options():
        kind_type = types.get(kind, positive_int if low >= 1 else nonnegative_int)
        parser.add_argument(
            "--" + name.replace("_", "-"), type=kind_type, default=default, metavar=metavar,
            help=text,
        )  # fmt: skip
