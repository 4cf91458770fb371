"""``commodel fit --db FILE [--campaign ID] -o platform.yaml``: a platform file from measurements."""

from __future__ import annotations

import argparse

from .common import add_buffer_option, positive_int, write_output

HELP = "fit a platform file from the campaigns of a results database"


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "fit",
        help=HELP,
        description=HELP + ". Every measured model part becomes its section: plogp, network "
        "(tree), lmo, many_to_one. By default the latest complete campaign of every benchmark.",
    )
    p.add_argument("--db", required=True, metavar="FILE", help="results database (DuckDB file)")
    p.add_argument(
        "--campaign",
        type=positive_int,
        action="append",
        metavar="ID",
        help="campaign to fit (repeat for several benchmarks)",
    )
    p.add_argument("--name", help="platform name (default: measured-<first host>)")
    p.add_argument(
        "-o", "--output", metavar="FILE", help="platform YAML to write (default: stdout)"
    )
    add_buffer_option(p)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from ..fit.assemble import fit_to_text

    text = fit_to_text(args.db, args.campaign, args.name, args.buffer)
    write_output(text, args.output)
    return 0
