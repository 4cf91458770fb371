"""``commodel study run|score|specs``: the held-out study on random emulated clusters."""

from __future__ import annotations

import argparse
import sys

HELP = "draw random cluster specs, calibrate and measure each on the emulated cluster, score"

EPILOG = """examples (root):
  commodel study specs --seed 7 --count 6                 # what the draws are, nothing run
  commodel study run --seed 7 --count 6 --role dev -o study-dev/
  commodel study score study-dev/ --refit                 # again offline, platforms refit

Each draw's directory holds its spec, the calibration (cal.duckdb, platform.yaml), the
workload's measurements (pattern.duckdb, forced.duckdb, counters.json) and score.json;
README.md holds the tables and the targets. A killed run resumes where it stopped.
Development (dev) seeds may be used to try a change; test seeds only to report a frozen one.
See docs/validation.md, *The held-out study*."""


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "study",
        help=HELP,
        description=HELP + ".",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="study_command", metavar="COMMAND", required=True)

    def draws(q: argparse.ArgumentParser) -> None:
        q.add_argument("--seed", type=int, required=True, help="seed of the draws (0 .. 2**63-1)")
        q.add_argument("--count", type=int, default=6, help="number of clusters drawn (6)")
        q.add_argument("--first", type=int, default=0, help="index of the first draw (0)")

    sp = sub.add_parser("specs", help="print the cluster specs a seed draws, run nothing")
    draws(sp)
    sp.add_argument("-o", "--output", metavar="DIR", help="also write them as DIR/<name>.yaml")
    sp.set_defaults(func=run_specs)

    rn = sub.add_parser("run", help="measure and score every draw (root, hours)")
    draws(rn)
    rn.add_argument("--role", required=True, choices=("dev", "test"), help="dev or test seeds")
    rn.add_argument("-o", "--output", required=True, metavar="DIR", help="study directory")
    rn.add_argument("--measure-only", action="store_true", help="measure, do not score")
    rn.add_argument(
        "--workload",
        default="full",
        choices=("full", "quick"),
        help="full: issue 38's (default); quick: a few of each part, minutes (the tests')",
    )
    rn.set_defaults(func=run_run)

    sc = sub.add_parser("score", help="score a study directory again, offline")
    sc.add_argument("directory", metavar="DIR")
    sc.add_argument(
        "--refit", action="store_true", help="fit each platform again from its cal.duckdb first"
    )
    sc.set_defaults(func=run_score)
    return p


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def run_specs(args: argparse.Namespace) -> int:
    import os

    import yaml

    from ..study.specs import draw_spec

    for i in range(args.first, args.first + args.count):
        spec = draw_spec(args.seed, i)
        print(f"{spec['name']}: {spec['description'].split(': ', 1)[-1]}")
        if args.output:
            os.makedirs(args.output, exist_ok=True)
            with open(os.path.join(args.output, f"{spec['name']}.yaml"), "w") as fh:
                yaml.safe_dump(spec, fh, sort_keys=False)
    return 0


def run_run(args: argparse.Namespace) -> int:
    import os

    from ..errors import CommodelError
    from ..study import run_study, score_study

    if os.geteuid() != 0:
        raise CommodelError("study run builds emulated clusters and needs root")
    run_study(args.output, args.seed, args.count, args.role, args.first, _log, True, args.workload)
    if not args.measure_only:
        print(score_study(args.output, log=_log))
    return 0


def run_score(args: argparse.Namespace) -> int:
    from ..study import score_study

    print(score_study(args.directory, refit=args.refit, log=_log))
    return 0
