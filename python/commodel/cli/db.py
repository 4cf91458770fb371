"""``commodel db list|export``: look into a results database."""

from __future__ import annotations

import argparse

HELP = "list the campaigns of a results database, or export it to Parquet / CSV"


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser("db", help=HELP, description=HELP + ".")
    sub = p.add_subparsers(dest="db_command", metavar="COMMAND", required=True)
    ls = sub.add_parser("list", help="one line per campaign")
    ls.add_argument("--db", required=True, metavar="FILE")
    ls.set_defaults(func=run_list)
    ex = sub.add_parser("export", help="write campaigns, samples and phase_times as files")
    ex.add_argument("--db", required=True, metavar="FILE")
    fmt = ex.add_mutually_exclusive_group(required=True)
    fmt.add_argument("--parquet", metavar="DIR", help="write DIR/<table>.parquet")
    fmt.add_argument("--csv", metavar="DIR", help="write DIR/<table>.csv")
    ex.set_defaults(func=run_export)
    return p


def run_list(args: argparse.Namespace) -> int:
    from ..db import ResultsDB

    with ResultsDB(args.db, read_only=True) as db:
        camps = db.campaigns()
        print(
            f"{'id':>4}  {'benchmark':<12} {'status':<9} {'ranks':>5} {'runs':>4} "
            f"{'samples':>8}  {'started (UTC)':<19}  hosts / MPI"
        )
        for c in camps:
            hosts = ",".join(sorted(set(c.hosts)))
            print(
                f"{c.id:>4}  {c.benchmark:<12} {c.status:<9} {c.ranks:>5} {c.runs:>4} "
                f"{db.count_samples(c.id):>8}  {c.started:%Y-%m-%d %H:%M:%S}  "
                f"{hosts} / {c.mpi_library}"
            )
    return 0


def run_export(args: argparse.Namespace) -> int:
    from ..db import ResultsDB

    fmt, directory = ("parquet", args.parquet) if args.parquet else ("csv", args.csv)
    with ResultsDB(args.db, read_only=True) as db:
        for path in db.export(directory, fmt):
            print(path)
    return 0
