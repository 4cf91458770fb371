"""``commodel predict``: predict a schedule's communication time on a platform."""

from __future__ import annotations

import argparse

from .common import write_output

HELP = "predict a GOAL schedule's time on a platform under a model"

EPILOG = """\
models:
  loggops   LogGOPS with LogGOPSim's semantics (platform section `loggops`)
  plogp     Kielmann's parameterized LogP, no contention (section `plogp`)
  hockney   alpha + beta * m per message (section `hockney`)
  plogpt    PlogPT: PLogP on a tree with bottleneck sharing and TCP RTOs (`plogp`, `network`)
  maxmin    max-min sharing weighted by route latency (`network`); maxmin-plain: unweighted
  zhu       NIC/backbone contention with the asymmetric property (`network`); zhu-fair
  all       every model the platform has sections for, side by side

examples:
  commodel predict a2a.goal --platform nomura2007 --model plogp
  commodel predict a2a.goal --platform my-cluster.yaml --model loggops --json -o a2a.json
  commodel schedule bcast-binomial --ranks 64 --size 1MiB | commodel predict - --platform nomura2007

Built-in platforms: nomura2007, loggopsim-default (examples/platforms/). The JSON fields
are described in docs/formats.md.
"""


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "predict",
        help=HELP,
        description=HELP + ".",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("schedule", metavar="SCHEDULE", help="GOAL file ('-' for stdin)")
    parser.add_argument(
        "--platform",
        "-p",
        required=True,
        metavar="FILE|NAME",
        help="platform file, or the name of a built-in platform",
    )
    parser.add_argument(
        "--model",
        "-M",
        default="loggops",
        metavar="NAME",
        help="model (default loggops); 'all': every model the platform can run, side by side",
    )
    parser.add_argument(
        "--gantt", metavar="FILE.png", help="also draw per-rank timelines (report/gantt.py)"
    )
    parser.add_argument(
        "--samples",
        type=int,
        metavar="N",
        help="run N times with the stochastic incast rule (platform section many_to_one) and "
        "report mean, median, p95 and a histogram of the makespans",
    )
    parser.add_argument(
        "--seed", type=int, default=0, metavar="S", help="first seed of --samples (default 0)"
    )
    parser.add_argument(
        "--json", action="store_true", help="print the prediction as JSON (docs/formats.md)"
    )
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from ..platform import load_platform, model_spec
    from ..prediction import predict
    from ..report.summary import prediction_summary
    from ..schedules import read_goal

    if args.model == "all":  # report/model_comparison.py
        from ..report.model_comparison import compare_models, comparison_table

        runs = compare_models(read_goal(args.schedule), load_platform(args.platform))
        write_output(comparison_table(runs), args.output)
        return 0
    if args.samples is not None:  # lmo/incast.py
        from ..lmo.incast import predict_samples

        samples = predict_samples(
            read_goal(args.schedule),
            load_platform(args.platform),
            args.model,
            args.samples,
            args.seed,
        )
        write_output(samples.report(), args.output)
        return 0
    # an unknown model or a platform that lacks the model's section fails first
    model_spec(args.model)
    platform = load_platform(args.platform)
    platform.engine_params(args.model)
    schedule = read_goal(args.schedule)
    record = args.json or bool(args.gantt)
    prediction = predict(schedule, platform, model=args.model, record_messages=record)
    if args.gantt:  # report/gantt.py
        from ..report.gantt import draw_gantt

        draw_gantt(prediction, args.gantt, platform)
    if args.json:
        text = prediction.to_json(indent=2) + "\n"
    else:
        name = "<stdin>" if args.schedule == "-" else args.schedule
        text = prediction_summary(prediction, name, schedule.num_ops, schedule.bytes_sent)
    write_output(text, args.output)
    return 0
