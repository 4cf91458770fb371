"""``commodel demo``: compare Alltoall A and B on the PlogPT paper's cluster."""

from __future__ import annotations

import argparse

from .common import check_output_file, positive_int, write_output

HELP = "predict Alltoall A and B on the PlogPT paper's 32-node cluster, 1 KiB .. 1 MiB"


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("demo", help=HELP, description=HELP + ".")
    parser.add_argument(
        "--platform", "-p", default="nomura2007", metavar="FILE|NAME", help="default nomura2007"
    )
    parser.add_argument("--ranks", "-P", type=positive_int, default=32, help="default 32")
    parser.add_argument(
        "--model",
        "-M",
        action="append",
        metavar="NAME",
        help="model to compare (repeatable; default: plogp, plogpt, maxmin, and tcpflow on a "
        "calibrated platform; those the platform has sections for, the others are listed as "
        "skipped)",
    )
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    parser.add_argument(
        "--cluster",
        action="store_true",
        help="as root: measure Alltoall A and B on an emulated 8-host cluster (commodel validate demo)",
    )
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    if args.cluster:
        from ..validate.alltoall_measured import run_cluster_demo

        return run_cluster_demo(argparse.Namespace(spec=None, reps=8, output=None))
    from ..alltoall_ab import demo_models, format_demo, run_demo
    from ..platform import load_platform, model_spec

    for model in args.model or []:
        model_spec(model)
    check_output_file(args.output, "-o")
    platform = load_platform(args.platform)
    models, skipped = (args.model, {}) if args.model else demo_models(platform)
    rows = run_demo(platform=platform, ranks=args.ranks, models=models)
    write_output(format_demo(rows, platform.name, args.ranks, skipped), args.output)
    return 0
