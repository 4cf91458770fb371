"""``commodel validate``: run schedules for real, predict them under every model, compare.

``commodel validate --platform P --schedules A.goal ... --db F.duckdb -o DIR [--cluster NAME]``
and ``commodel validate random --degree d --trials N --seed S ...`` (Zhu et al. section 7).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ..errors import CommodelError
from .common import add_jobs_option, check_seed_range, positive_int, seed_arg, size_arg

HELP = "run schedules on the emulated cluster, predict them under every model and compare"

EPILOG = """\
examples:
  commodel cluster up --spec examples/clusters/two-rack-8.yaml
  commodel validate --platform fitted.yaml --schedules a2a-64KiB.goal a2a-1MiB.goal \\
      --cluster tworack8 --db val.duckdb -o report/
  commodel validate random --degree 2 --trials 10 --seed 1 --size 256KiB \\
      --platform fitted.yaml --cluster tworack8 --db val.duckdb -o random-d2/
  commodel validate --platform fitted.yaml --schedules a2a-64KiB.goal --db val.duckdb -o r/
      (without --cluster: compare with what the database already holds)

The report directory gets summary.txt, summary.csv, makespans.csv, messages.csv and the
PNGs error-histogram-{makespans,messages}.png and predicted-vs-measured.png
(docs/validation.md). With 'demo' as the first argument (root only): the short version
of the Alltoall experiment on an 8-host cluster, brought up and down by the command.
"""


def register(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "validate",
        help=HELP,
        description="Measure GOAL schedules with `measure pattern` (through `cluster mpirun` "
        "when --cluster is given, else from the database), predict them with every model and "
        "report, per model, the fraction of makespans and messages within +-10%, the mean "
        "and worst relative error, error histograms and predicted-against-measured plots.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "what",
        nargs="?",
        choices=("schedules", "random", "demo"),
        default="schedules",
        help="schedules (default): the files of --schedules; random: Zhu's random-pairs "
        "evaluation; demo: the short Alltoall A/B study on a temporary 8-host cluster",
    )
    p.add_argument("--platform", metavar="FILE", help="platform file fitted on the cluster")
    p.add_argument("--schedules", nargs="+", metavar="GOAL", default=[], help="GOAL schedules")
    p.add_argument(
        "--models", default="all", help="`all` (default) or a comma-separated list of models"
    )
    p.add_argument("--reps", type=positive_int, default=20, help="measure pattern --max-reps (20)")
    p.add_argument("--db", metavar="FILE", help="results database (DuckDB)")
    p.add_argument("-o", "--output", metavar="DIR", help="report directory")
    p.add_argument("--cluster", metavar="NAME", help="measure on this emulated cluster")
    p.add_argument(
        "-k",
        "--ranks-per-host",
        type=positive_int,
        default=1,
        help="ranks per emulated host (cluster mpirun -k)",
    )
    p.add_argument(
        "--tolerance", type=float, default=0.10, help="relative tolerance (0.10 for +-10%%)"
    )
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per run (120)")
    p.add_argument(
        "--machine-wait",
        type=float,
        default=None,
        metavar="SHARE",
        help="report apart, outside the accuracy figures, the schedules whose median repetition "
        "had a rank wait for a CPU longer than this share of the makespan (default: none; the "
        "summary shows the wait shares)",
    )
    p.add_argument("--no-plots", action="store_true", help="write the CSV and text only")
    add_jobs_option(p)
    g = p.add_argument_group("random (Zhu section 7)")
    g.add_argument("--degree", type=positive_int, default=1, help="passes d (1)")
    g.add_argument("--trials", type=positive_int, default=10, help="random schedules (10)")
    g.add_argument(
        "--seed", type=seed_arg, default=0, help="seed of the first schedule, 0 .. 2**64 - 1 (0)"
    )
    g.add_argument("--size", type=size_arg, default=256 * 1024, help="message size (256KiB)")
    g.add_argument("--ranks", type=positive_int, help="ranks (default: the platform's nodes)")
    g.add_argument("--spec", metavar="FILE", help="demo: cluster spec (two-rack-8)")
    p.set_defaults(func=run)
    return p


def _random_schedules(args: argparse.Namespace, ranks: int, outdir: str) -> list[str]:
    from ..schedules import collective, write_goal

    check_seed_range(args.seed, args.trials, "--trials")
    sdir = os.path.join(outdir, "schedules")
    os.makedirs(sdir, exist_ok=True)
    paths = []
    for t in range(args.trials):
        seed = args.seed + t
        path = os.path.join(sdir, f"random-pairs-d{args.degree}-s{seed}-P{ranks}.goal")
        sched = collective("random-pairs", ranks, args.size, seed=seed, degree=args.degree)
        write_goal(sched, path)
        paths.append(path)
    return paths


def run(args: argparse.Namespace) -> int:
    if args.what == "demo":
        from ..validate.alltoall_measured import run_cluster_demo

        return run_cluster_demo(args)
    for flag, value in (("--platform", args.platform), ("--db", args.db), ("-o", args.output)):
        if not value:
            raise CommodelError(f"validate: {flag} is required")
    if not 0 < args.tolerance < 10:
        raise CommodelError(f"--tolerance must be in (0, 10), got {args.tolerance}")
    from ..platform import load_platform
    from ..validate.runner import resolve_models, summary_text, validate, write_report

    models = resolve_models(args.models)
    platform = load_platform(args.platform)
    schedules = list(args.schedules)
    if args.what == "random":
        if schedules:
            raise CommodelError("validate random generates its schedules; drop --schedules")
        ranks = args.ranks or platform.nodes * args.ranks_per_host
        schedules = _random_schedules(args, ranks, args.output)
    elif not schedules:
        raise CommodelError("validate: give --schedules FILE... (or `validate random`)")
    if args.cluster is None and not os.path.exists(args.db):
        raise CommodelError(
            f"{args.db}: no such results database; give --cluster NAME to measure the schedules"
        )
    v = validate(
        schedules,
        args.platform,
        models,
        args.db,
        cluster=args.cluster,
        max_reps=args.reps,
        ranks_per_host=args.ranks_per_host,
        tolerance=args.tolerance,
        timeout=args.timeout,
        progress=lambda text: print(text, file=sys.stderr, flush=True),
        machine_wait=args.machine_wait,
        jobs=args.jobs,
    )
    paths = write_report(v, args.output, plots=not args.no_plots)
    sys.stdout.write(summary_text(v))
    print(f"wrote {len(paths)} files to {args.output}")
    return 0
