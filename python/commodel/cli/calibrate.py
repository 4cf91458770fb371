"""``mpirun -n P commodel calibrate --db FILE -o platform.yaml``: measure and fit in one go."""

from __future__ import annotations

import argparse
import os
import shlex
import sys

from .common import add_buffer_option, size_arg

HELP = "measure everything the models need under mpirun, then fit a complete platform file"

EXAMPLE = "mpirun -n 8 python3 -m commodel calibrate --db cal.duckdb -o platform.yaml"


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    from ..measure.calibrate import DEFAULT_PARTS

    every = ",".join(DEFAULT_PARTS)
    p = subparsers.add_parser(
        "calibrate",
        help=HELP,
        description=HELP + ": the hosts' TCP settings (tcp), the timeouts of a pairwise exchange "
        "whose steps follow each other (chain, on fresh connections, for tcpflow), PLogP "
        "(plogp), the network: which "
        "nodes share an uplink and its rate (topology; or PlogPT's binary tree b(h), d(h) with "
        "--parts ...,tree,... on 2^D ranks), LMO constants (lmo) and many-to-one "
        "escalations (many-to-one) and TCP's efficiency when traffic runs both ways "
        "(efficiency, for the tcpflow model) and the bytes a message puts on the wire (wire, "
        "counted by the interfaces, for tcpflow), the switch ports' buffers (ports) and, last, "
        "four collectives run for real and predicted with the fitted platform (check: the "
        "model's error, which widens every prediction's interval), one rank per node, each as "
        "a campaign of the results "
        "database, then `commodel fit` of those campaigns. Run it again on the same database "
        "to continue after an interruption: complete parts are reused, an unfinished one is "
        f"resumed. Example: {EXAMPLE} (on the emulated cluster: commodel cluster mpirun -- "
        "python3 -m commodel calibrate ...).",
    )
    p.add_argument("--db", required=True, metavar="FILE", help="results database (DuckDB file)")
    p.add_argument(
        "-o", "--output", metavar="FILE", help="platform YAML to write (default: stdout)"
    )
    p.add_argument("--name", help="platform name (default: measured-<first host>)")
    p.add_argument(
        "--parts",
        default=every,
        help="parts to measure, comma-separated, in this order (default: all of "
        f"{every} that the rank count allows; tree instead of topology for PlogPT's binary "
        "tree)",
    )
    p.add_argument(
        "--max-size",
        type=size_arg,
        default=256 << 10,
        help="largest PLogP and efficiency message size (default 256KiB; above it the tables "
        "go on with their last per-byte slope and value, as large messages do)",
    )
    p.add_argument(
        "--fresh",
        action="store_true",
        help="measure every part anew instead of reusing complete campaigns of the database",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bars or part lines")
    add_buffer_option(p)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from ..measure import calibrate
    from .common import write_output

    names = calibrate.parse_parts(args.parts)
    if args.output not in (None, "-"):
        parent = os.path.dirname(os.path.abspath(args.output))
        if not os.path.isdir(parent):
            from ..errors import CommodelError

            raise CommodelError(f"-o {args.output}: the directory {parent} does not exist")

    def log(text: str) -> None:
        if not args.quiet:
            print(text, file=sys.stderr, flush=True)

    code, summary = calibrate.run(
        args.db,
        names,
        args.max_size,
        fresh=args.fresh,
        progress=not args.quiet,
        command=shlex.join(["commodel"] + sys.argv[1:]),
        log=log,
    )
    if summary is None:
        return code

    from ..fit.assemble import fit_to_text

    ids = sorted(summary["campaigns"].values())
    text = fit_to_text(args.db, ids, args.name, args.buffer)
    write_output(text, args.output)
    took = ", ".join(f"{k} {v:.1f} s" for k, v in summary["elapsed_s"].items())
    skipped = "; ".join(f"{k}: {v}" for k, v in summary["skipped"].items())
    log(
        f"calibrate: {summary['ranks']} ranks, campaigns "
        + ", ".join(f"{k} {v}" for k, v in summary["campaigns"].items())
        + (f"; measured: {took}" if took else "; nothing measured (all reused)")
        + (f"; skipped: {skipped}" if skipped else "")
        + (f"; platform written to {args.output}" if args.output not in (None, "-") else "")
    )
    return 0
