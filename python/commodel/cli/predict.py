"""``commodel predict``: predict a schedule's communication time on a platform."""

from __future__ import annotations

import argparse
import json
import os
import textwrap
from typing import Any

from ..errors import CommodelError
from .common import (
    add_jobs_option,
    check_output_file,
    check_seed_range,
    positive_int,
    seed_arg,
    write_output,
)

HELP = "predict a GOAL schedule's time on a platform under a model"

EPILOG = """\
models [the platform sections each reads]:
{models}
  all           every model the platform has sections for, side by side; the others are
                listed as skipped. With --json: one object, {{"model": "all", "predictions":
                {{MODEL: the object of a single --json}}, "skipped": {{MODEL: reason}}}}; with
                --gantt FILE.png: one picture per model, FILE-MODEL.png; the models run
                up to --jobs N at once (default: the usable cores), with the same output

examples:
  commodel predict a2a.goal --platform nomura2007 --model plogp
  commodel predict a2a.goal --platform my-cluster.yaml --model loggops --json -o a2a.json
  commodel predict big.goal -p my-cluster.yaml --json --no-messages --parquet big.parquet
  commodel schedule bcast-binomial --ranks 64 --size 1MiB | commodel predict - --platform nomura2007

Built-in platforms: nomura2007, loggopsim-default (examples/platforms/). The JSON fields
and the Parquet columns are described in docs/formats.md, the JSON Schema is
docs/prediction.schema.json. For runs with millions of messages, --json --no-messages gives
the summary and --parquet the messages, one row each (DuckDB: SELECT * FROM 'big.parquet').
--gantt draws one bar per message up to 64 ranks and a density view beyond
(docs/models.md). Output files (-o, --gantt, --parquet) are checked before the simulation
starts.
"""


def models_help() -> str:
    """The registered models, one per line: name, summary and the sections it reads."""
    from ..platform import model_names, model_spec

    lines = []
    for name in model_names():
        spec = model_spec(name)
        text = f"{name:<13} {spec.summary} [{', '.join(spec.sections)}]"
        lines.append(textwrap.fill(text, 86, initial_indent="  ", subsequent_indent=" " * 16))
    return "\n".join(lines)


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "predict",
        help=HELP,
        description=HELP + ".",
        epilog=EPILOG.format(models=models_help()),
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
        metavar="NAME",
        help="model (default: tcpflow on a calibrated platform, one with tcp.efficiency; "
        "loggops otherwise, or without a loggops section the first of tcpflow, plogp, "
        "hockney, maxmin the platform can run); 'all': every model the platform can run, "
        "side by side",
    )
    parser.add_argument(
        "--gantt",
        metavar="FILE.png",
        help="also draw per-rank timelines (.png, .svg, .pdf, ...; with --model all: "
        "FILE-MODEL.png per model)",
    )
    parser.add_argument(
        "--parquet",
        metavar="FILE",
        help="also write every message as a row of a Parquet file (needs pyarrow)",
    )
    parser.add_argument(
        "--samples",
        type=positive_int,
        metavar="N",
        help="run N times with the stochastic incast rule (platform section many_to_one) and "
        "report mean, median, p95 and a histogram of the makespans",
    )
    parser.add_argument(
        "--seed",
        type=seed_arg,
        metavar="S",
        help="first seed of --samples, 0 .. 2**64 - 1 (default 0)",
    )
    parser.add_argument(
        "--spread",
        type=int,
        metavar="K",
        help="K runs with per-message noise of the platform's tcp.spread: the makespan's "
        "80%% interval and, under tcpflow, the run of median makespan as the prediction "
        "(stragglers; default 20 where the platform has it; 0: none, the run without noise)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print the prediction as JSON (docs/formats.md)"
    )
    parser.add_argument(
        "--no-messages",
        action="store_true",
        help="with --json: leave out the list of messages (a summary for large runs)",
    )
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    add_jobs_option(parser)
    parser.set_defaults(func=run)
    return parser


def model_file(path: str, model: str) -> str:
    """The picture of one model of ``--model all``: ``a2a.png`` -> ``a2a-plogp.png``."""
    stem, suffix = os.path.splitext(path)
    return f"{stem}-{model}{suffix}"


def with_interval(prediction: Any, schedule: Any, platform: Any, model: str, k: int | None) -> Any:
    """``prediction`` with its 80% interval (:mod:`commodel.spread`): K noisy runs, by
    default 20 where the platform has ``tcp.spread`` and the model scales messages."""
    import dataclasses

    from ..spread import SAMPLES, sigma_of, spread

    if k is not None and k != 0 and k < 2:
        raise CommodelError(f"--spread {k}: an interval needs at least 2 runs (0: none)")
    if k == 0 or model == "loggops":
        if k:
            raise CommodelError("--spread: loggops has no per-message noise; choose another model")
        return prediction
    if sigma_of(platform) is None:
        if k:
            raise CommodelError(
                f"--spread {k}: platform {platform.name} has no tcp.spread (commodel calibrate "
                "measures it)"
            )
        return prediction
    sp = spread(schedule, platform, model, samples=k or SAMPLES, prediction=prediction)
    return prediction if sp is None else dataclasses.replace(prediction, interval=sp.as_dict())


def check_options(args: argparse.Namespace) -> None:
    """Refuse combinations that would be ignored, and unwritable outputs, before any work."""
    if args.samples is not None:
        if args.model == "all":
            raise CommodelError("--samples runs one model: choose it with --model NAME")
        if args.json or args.gantt:
            raise CommodelError(
                "--samples reports the makespans of N runs; --json and --gantt show one run"
            )
        check_seed_range(args.seed or 0, args.samples, "--samples")
    elif args.seed is not None:
        raise CommodelError("--seed is the first seed of --samples; give --samples N too")
    if args.jobs is not None and args.model != "all":
        raise CommodelError("--jobs runs the models of --model all at once; add --model all")
    if args.no_messages and not args.json:
        raise CommodelError("--no-messages applies to --json output; add --json")
    if (args.parquet or args.no_messages) and (args.model == "all" or args.samples is not None):
        raise CommodelError(
            "--parquet and --no-messages write the messages of one run: "
            "choose the model with --model NAME, without --samples"
        )
    check_output_file(args.output, "-o")
    if args.parquet:
        from ..report.messages_out import check_parquet

        check_output_file(args.parquet, "--parquet")
        check_parquet()
    if args.gantt:
        from ..report.picture_files import check_picture_path

        check_output_file(args.gantt, "--gantt")
        check_picture_path(args.gantt, "--gantt")


def run(args: argparse.Namespace) -> int:
    from ..platform import default_model, load_platform, model_spec
    from ..prediction import predict
    from ..report.summary import prediction_summary
    from ..schedules import read_goal

    check_options(args)
    platform = None  # read once, when first needed (its warnings are printed once)
    if args.model is None:
        platform = load_platform(args.platform)
        args.model = default_model(platform)
    record = (args.json and not args.no_messages) or bool(args.gantt) or bool(args.parquet)
    if args.model == "all":  # report/model_comparison.py
        from ..parallel import executor
        from ..report.model_comparison import compare_models, comparison_dict, comparison_table

        platform = platform or load_platform(args.platform)
        # MPI workers each read the file (a schedule is not sent by pickle); threads share
        # one reading.
        sched = args.schedule if executor() == "mpi" else read_goal(args.schedule)
        runs = compare_models(sched, platform, record_messages=record, jobs=args.jobs)
        if args.gantt:
            from ..report.gantt import draw_gantt

            for r in runs:
                if r.prediction is not None:
                    draw_gantt(r.prediction, model_file(args.gantt, r.model), platform)
        if args.json:
            text = json.dumps(comparison_dict(runs, platform.name), indent=2) + "\n"
        else:
            text = comparison_table(runs)
        write_output(text, args.output)
        return 0
    if args.samples is not None:  # lmo/incast.py
        from ..lmo.incast import predict_samples

        samples = predict_samples(
            read_goal(args.schedule),
            platform or load_platform(args.platform),
            args.model,
            args.samples,
            args.seed or 0,
        )
        write_output(samples.report(), args.output)
        return 0
    # an unknown model or a platform that lacks the model's section fails first
    model_spec(args.model)
    platform = platform or load_platform(args.platform)
    platform.engine_params(args.model, ranks=1)
    schedule = read_goal(args.schedule)
    prediction = predict(
        schedule, platform, model=args.model, record_messages=record, noise=args.spread
    )
    prediction = with_interval(prediction, schedule, platform, args.model, args.spread)
    if args.gantt:  # report/gantt.py
        from ..report.gantt import draw_gantt

        draw_gantt(prediction, args.gantt, platform)
    if args.parquet:  # report/messages_out.py
        from ..report.messages_out import write_parquet

        write_parquet(prediction, args.parquet)
    if args.json:
        from ..report.messages_out import text_output, write_json

        with text_output(args.output) as handle:
            write_json(prediction, handle, messages=not args.no_messages)
        return 0
    name = "<stdin>" if args.schedule == "-" else args.schedule
    s = platform.cpu_stretch(schedule.num_ranks)
    shared = (platform.sections["cpu"].cores, s) if s > 1 else None
    text = prediction_summary(prediction, name, schedule.num_ops, schedule.bytes_sent, shared)
    write_output(text, args.output)
    return 0
