"""``commodel advise``: the fastest Open MPI algorithm per size, and a rules file for mpirun."""

from __future__ import annotations

import argparse
import os
import sys

from ..errors import CommodelError
from .common import add_jobs_option, positive_int, size_arg, size_list, write_output

HELP = "predict every Open MPI algorithm of a collective, pick the fastest, write a rules file"

EPILOG = """\
examples:
  commodel advise --platform platform.yaml --collective alltoall --ranks 8,16 --sizes 1KiB..1MiB
  commodel advise --platform nomura2007 --collective bcast --plot bcast.png --rules rules.txt
  commodel advise --check-rules rules.txt
  commodel advise --platform platform.yaml --collective alltoall --ranks 8 --sizes 1KiB..1MiB \\
      --verify verify.duckdb --mpirun "commodel cluster mpirun --" --plot verify.png

--sizes is a comma-separated list or LO..HI (powers of two from LO to HI); sizes are per
rank as `commodel schedule --list` counts them. The rules file is Open MPI 4.1.4's classic
coll/tuned dynamic rules format (docs/advise.md); Open MPI ignores a malformed one without a
word, so --check-rules validates it (exit 2 on a file Open MPI would ignore or fail on).

--verify DB writes the rules file (--rules FILE, or DB's name with .rules.txt), then starts
one mpirun per run and P (--mpirun prefix; `-n P` and the --mca options go before a
trailing `--`): Open MPI's default decision, our rules file, every forced algorithm (and,
for gather, the split gathers), each a campaign in DB; rerun the same command to resume.
It prints the speedup t_default / t_ours with its 95% Fieller interval and the targets
(docs/advise.md), and writes a CSV (DB's name with .verify.csv). Under Open MPI 5 and
Intel MPI one more run counts what a call sent to each peer under our rules and says where
the chosen algorithm ran (Intel MPI: the kernel's TCP byte counts, one rank a host of the
emulated cluster). --measured-rules FILE also writes the rules the measurements pick (the
measured best where the default is slower than it beyond the spread); --use-rules FILE
measures a given rules file as ours, e.g. those measured rules in a fresh database (Open
MPI's format: not for Intel MPI).
"""


def sizes_arg(text: str) -> list[int]:
    """argparse type: ``1KiB,64KiB`` or ``1KiB..4MiB`` (doubling from LO up to HI)."""
    if ".." in text:
        lo_text, hi_text = text.split("..", 1)
        lo, hi = size_arg(lo_text), size_arg(hi_text)
        if lo < 1 or hi < lo:
            raise argparse.ArgumentTypeError(f"expected LO..HI with 1 <= LO <= HI, got {text!r}")
        out = []
        m = lo
        while m <= hi:
            out.append(m)
            m *= 2
        return out
    sizes = size_list(text)
    if not sizes:
        raise argparse.ArgumentTypeError(f"expected at least one size, got {text[:40]!r}")
    return sizes


def percent_arg(text: str) -> float:
    """argparse type: ``25%`` or ``0.25`` -> 0.25 (a fraction >= 0)."""
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100.0 if raw.endswith("%") else float(raw)
    except ValueError:
        msg = f"expected a percentage such as 20%, got {text[:40]!r}"
        raise argparse.ArgumentTypeError(msg) from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"expected a percentage >= 0, got {text[:40]!r}")
    return value


def min_gain_arg(text: str) -> tuple[float, float]:
    """argparse type: ``PCT`` (every size) or ``PCT,PCT`` (below 32 KiB, from 32 KiB)."""
    parts = text.split(",")
    if len(parts) > 2:
        raise argparse.ArgumentTypeError(
            f"expected one percentage or two (below 32 KiB, from 32 KiB), got {text[:40]!r}"
        )
    values = [percent_arg(x) for x in parts]
    return (values[0], values[-1])


def ranks_arg(text: str) -> list[int]:
    ranks = [positive_int(x) for x in text.split(",") if x.strip()]
    if not ranks:
        raise argparse.ArgumentTypeError(
            f"expected at least one communicator size, got {text[:40]!r}"
        )
    return ranks


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "advise",
        help=HELP,
        description=HELP + ".",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--platform", "-p", metavar="FILE|NAME", help="platform file or built-in name"
    )
    parser.add_argument(
        "--collective",
        metavar="C",
        help="alltoall, allgather, allreduce, bcast, gather, scatter or barrier",
    )
    parser.add_argument(
        "--ranks", type=ranks_arg, metavar="P,...", help="communicator sizes (the platform's)"
    )
    parser.add_argument(
        "--sizes", type=sizes_arg, metavar="SIZES", help="message sizes (1KiB..4MiB)"
    )
    parser.add_argument(
        "--model",
        help="prediction model (default: tcpflow on a calibrated platform, one with "
        "tcp.efficiency; loggops otherwise, or without a loggops section the first of "
        "tcpflow, plogp, hockney, maxmin the platform can run)",
    )
    parser.add_argument("--root", type=int, default=0, help="root of bcast, gather, scatter (0)")
    parser.add_argument(
        "--splits",
        type=positive_int,
        metavar="K",
        help="gather: consider the split into K linear sub-gathers at every size (default: "
        "k = ceil(M / Ms), Ms the largest measured size below M1(n) for every n <= P, "
        "where the platform's "
        "many_to_one section predicts escalations)",
    )
    parser.add_argument(
        "--samples",
        type=int,
        metavar="N",
        help="gather on a platform with escalation levels (many_to_one.levels): each time is "
        "the mean of N runs with the incast rule (32; 0: one run without it)",
    )
    parser.add_argument(
        "--min-gain",
        type=min_gain_arg,
        default=None,
        metavar="PCT[,PCT]",
        help="keep Open MPI's default unless the predicted best is faster by more than this; "
        "one value for every size, or two: below 32 KiB and from 32 KiB (default 30%%,5%%, "
        "docs/advise.md; 0: always the predicted best)",
    )
    parser.add_argument("--plot", metavar="FILE", help="plot time against size per algorithm")
    parser.add_argument("--rules", metavar="FILE", help="write Open MPI's dynamic rules file")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the table to FILE")
    parser.add_argument(
        "--check-rules", metavar="FILE", help="only check a rules file as Open MPI 4.1.4 reads it"
    )
    parser.add_argument(
        "--verify",
        metavar="DB",
        help="measure default, our rules and every forced algorithm on the real MPI "
        "(DuckDB file; resumable)",
    )
    parser.add_argument(
        "--mpirun",
        default="mpirun",
        metavar="CMD",
        help="with --verify: the launcher and its options, one string (mpirun; on the "
        "emulated cluster 'commodel cluster mpirun --')",
    )
    parser.add_argument(
        "--min-reps", type=positive_int, help="with --verify: repetitions before the CI test (5)"
    )
    parser.add_argument(
        "--max-reps", type=positive_int, help="with --verify: repetition cap per size (100)"
    )
    parser.add_argument(
        "--budget",
        type=float,
        metavar="SECONDS",
        help="with --verify: a size whose 95%% interval is still wider than 2%% goes on past "
        "--max-reps until its repetitions have taken SECONDS of wall time in that mpirun "
        "(cheap sizes reach their interval; 0: off, the default)",
    )
    parser.add_argument(
        "--rounds",
        type=positive_int,
        default=1,
        metavar="K",
        help="with --verify: measure every run (default, rules, each forced algorithm) in K "
        "mpiruns, round after round, and judge each by its K per-mpirun means (separate "
        "mpiruns of one algorithm differ by up to 15%% at small sizes; 3 or more for an "
        "interval of use; 1)",
    )
    parser.add_argument(
        "--use-rules",
        metavar="FILE",
        help="with --verify: measure this rules file as ours instead of the advice's (e.g. "
        "--measured-rules of an earlier verification); it is copied to the rules path",
    )
    parser.add_argument(
        "--measured-rules",
        metavar="FILE",
        help="with --verify: also write the rules the measurements pick: the measured best "
        "where the default is slower than it by more than the run-to-run spread, else the "
        "default; outside the sizes measured, --use-rules FILE's rules or the default "
        "(verify them in a fresh database with --use-rules)",
    )
    parser.add_argument(
        "--mpi",
        metavar="NAME",
        help="the MPI to advise: openmpi-4.1, openmpi-5.0, mpich or intel-mpi (its algorithms, default "
        "decision and rules format; default: the MPI of the mpirun on PATH, else of the "
        "library mpi4py loads, else openmpi-4.1)",
    )
    parser.add_argument("--quiet", action="store_true", help="with --verify: no progress bars")
    add_jobs_option(parser)
    parser.set_defaults(func=run, _parser=parser)
    return parser


def chosen_mpi(args: argparse.Namespace) -> str:
    """--mpi, or the MPI detected from the launcher (--mpirun's program when it is an
    mpirun) or mpi4py; Open MPI 4.1 when nothing is found."""
    from ..mpis import detect, get

    if args.mpi:
        return get(args.mpi).name
    try:
        return detect()
    except CommodelError:
        return "openmpi-4.1"


def run(args: argparse.Namespace) -> int:
    if args.check_rules:
        return check_rules(args.check_rules, chosen_mpi(args))
    given = (("--platform", args.platform), ("--collective", args.collective))
    missing = [flag for flag, value in given if not value]
    if missing:
        raise CommodelError(f"advise: {' and '.join(missing)} required (or --check-rules FILE)")
    from ..advise.advice import advise, check_collective, mpirun_line
    from ..platform import load_platform
    from ..report.advise_tables import format_advice

    mpi = chosen_mpi(args)
    from ..mpis import get as get_mpi

    check_collective(args.collective, get_mpi(mpi))
    for flag, value in (("--use-rules", args.use_rules), ("--measured-rules", args.measured_rules)):
        if value and not args.verify:
            raise CommodelError(f"advise: {flag} needs --verify DB")
        if value and mpi in ("intel-mpi", "mpich"):  # both read and write Open MPI's format
            raise CommodelError(
                f"advise: {flag} is not available for {get_mpi(mpi).label} yet (Open MPI "
                "rules files only); verify the advice's own settings"
            )
    given = read_given_rules(args.use_rules, args.collective, mpi) if args.use_rules else None
    plat = load_platform(args.platform)
    ranks = args.ranks or [plat.nodes * plat.ranks_per_node]
    sizes = args.sizes or sizes_arg("1KiB..4MiB")
    adv = advise(
        plat,
        args.collective,
        ranks,
        sizes,
        model=args.model,
        root=args.root,
        jobs=args.jobs,
        splits=args.splits,
        samples=args.samples,
        mpi=mpi,
        **({} if args.min_gain is None else {"min_gain": args.min_gain}),
    )
    if args.verify:
        return run_verify(args, adv, given)
    write_output(format_advice(adv) + "\n", args.output)
    if args.plot:
        from ..report.advise_plot import plot_advice

        plot_advice(adv, args.plot)
        print(f"plot: {args.plot}")
    if args.rules:
        write_advice_rules(adv, args.rules)
        print(f"rules: {args.rules}")
        print(mpirun_line(os.path.abspath(args.rules), adv.mpi))
    return 0


def write_advice_rules(adv, path: str, check_unchanged_in: str | None = None) -> str:
    """The rules of ``adv`` written to ``path`` (checked with our reader of 4.1.4's format);
    with ``check_unchanged_in`` (a --verify database), refuse to change a rules file whose
    campaigns are in it."""
    from ..advise.advice import rules_from_advice

    if adv.mpi == "mpich":
        return write_mpich_rules(adv, path)
    if adv.mpi == "intel-mpi":
        return write_intel_settings(adv, path, check_unchanged_in)
    tables = rules_from_advice([adv])
    if not tables:
        raise CommodelError("advise: no algorithm could be predicted, no rules to write")
    return write_checked_rules(tables, path, check_unchanged_in, adv.mpi)


def write_mpich_rules(adv, path: str) -> str:
    """MPICH's JSON tuning file for ``adv``: the installed MPICH's own selection tree (read
    from its library) with the advised collective's branch replaced, checked with our
    reader of csel.c's grammar before it is written."""
    import json

    from ..advise.advice import mpich_rules_from_advice
    from ..mpis.mpich import builtin_tree, check_json, installed_library

    builtin = builtin_tree(installed_library())
    text = json.dumps(mpich_rules_from_advice(adv, builtin), indent=1) + "\n"
    return write_read_back(path, text, check_json(text.encode(), builtin))


def write_intel_settings(adv, path: str, check_unchanged_in: str | None = None) -> str:
    """Intel MPI's settings file for ``adv`` (``I_MPI_ADJUST_<COLL>`` with size ranges),
    checked with our reader of the variable's grammar before it is written; with
    ``check_unchanged_in`` (a --verify database), refuse to change one whose campaigns are
    in it."""
    from ..advise.advice import intel_settings_from_advice
    from ..mpis.intelmpi import check_settings

    text = intel_settings_from_advice(adv)
    if check_unchanged_in:
        from ..advise.verify_runs import check_rules_unchanged

        check_rules_unchanged(check_unchanged_in, path, text)
    return write_read_back(path, text, check_settings(text.encode(), path))


def write_read_back(path: str, text: str, problems: list[tuple[str, str]]) -> str:
    """``text`` written to ``path`` unless our reader found an error in it (``problems``, as
    (kind, message)): then our writer and our reader disagree, a bug."""
    bad = [m for kind, m in problems if kind == "error"]
    if bad:
        raise CommodelError(f"internal: the rules for {path} fail our reader: {bad[0]}")
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise CommodelError(f"{path}: cannot write: {exc.strerror or exc}") from None
    return text


def write_checked_rules(
    tables, path: str, check_unchanged_in: str | None = None, mpi: str = "openmpi-4.1"
) -> str:
    """``tables`` written to ``path``, checked first with our reader of the format as ``mpi``
    (an Open MPI: ``openmpi-4.1`` or ``openmpi-5.0``, whose allgather has one algorithm
    more) reads it; with ``check_unchanged_in`` (a --verify database), refuse to change a
    rules file whose campaigns are in it."""
    from ..advise.rules import format_rules, parse_rules, write_rules

    text = format_rules(tables, mpi)
    bad = [p for p in parse_rules(text.encode(), mpi).problems if p.kind == "error"]
    if bad:  # our writer and our reader disagree: a bug
        raise CommodelError(f"internal: the rules for {path} fail our reader: {bad[0]}")
    if check_unchanged_in:
        from ..advise.verify_runs import check_rules_unchanged

        check_rules_unchanged(check_unchanged_in, path, text)
    return write_rules(tables, path, mpi)


def read_given_rules(path: str, collective: str, mpi: str = "openmpi-4.1"):
    """(the tables, the bytes) of a rules file for --use-rules: one ``mpi`` (an Open MPI)
    reads, with rules for ``collective`` (exit 2 otherwise). The bytes are kept as they are:
    Open MPI's fscanf reads any, text not UTF-8 in a comment included."""
    from ..advise.rules import COLLECTIVE_IDS, parse_rules
    from ..mpis import get as get_mpi
    from ..mpis.rules_file import read_rules_bytes

    data = read_rules_bytes(path)
    result = parse_rules(data, mpi)
    errors = [p for p in result.problems if p.kind == "error"]
    if errors:
        raise CommodelError(
            f"--use-rules {path}: {get_mpi(mpi).label} would not use it: {errors[0]}"
        )
    cid = COLLECTIVE_IDS[collective]
    if not any(t.collective_id == cid for t in result.tables):
        raise CommodelError(
            f"--use-rules {path}: no rules for {collective} (collective id {cid}); with it, "
            "Open MPI runs its default decision"
        )
    return result.tables, data


def write_measured_rules(
    collective: str, points, path: str, base=None, mpi: str = "openmpi-4.1"
) -> None:
    """--measured-rules: write the rules the verification's measurements pick (outside the
    sizes measured, ``base``'s: the tables of --use-rules), and say where they depart from
    the default and how to verify them."""
    import shlex

    from ..advise.advice import mpirun_line
    from ..advise.verify_runs import rules_from_measured
    from ..mpis import get as get_mpi
    from ..units import format_size

    table, depart = rules_from_measured(collective, points, base)
    if table is None:
        raise CommodelError(f"--measured-rules {path}: no point measured, no rules to write")
    write_checked_rules([table], path, mpi=mpi)
    where = "; ".join(
        f"P={v.ranks} {format_size(v.size)}: {v.best} {get_mpi(mpi).label_of(collective, v.best)}, "
        f"{100 * (v.default_s / v.best_s - 1):.1f}% faster"
        for v in depart
    )
    print(f"measured rules: {path} (" + (f"departs from the default at {where})" if depart
          else "the default at every point)"))  # fmt: skip
    print(mpirun_line(os.path.abspath(path), mpi))
    print(
        "chosen from these measurements: verify them in a fresh database, e.g. "
        f"commodel advise ... --use-rules {shlex.quote(path)} --verify NEW.duckdb"
    )


def run_verify(args: argparse.Namespace, adv, given=None) -> int:
    import shlex

    from ..advise import verify_runs
    from ..report.advise_tables import format_advice

    if adv.collective == "barrier":
        raise CommodelError("--verify: barrier has no message sizes to verify rules over")
    mpirun = shlex.split(args.mpirun)
    if not mpirun:
        raise CommodelError("--mpirun: empty launcher")
    path = verify_runs.rules_path(args.verify, args.rules)
    if given is None:
        write_advice_rules(adv, path, check_unchanged_in=args.verify)
    else:
        verify_runs.check_rules_unchanged(args.verify, path, given[1])
        with open(path, "wb") as handle:
            handle.write(given[1])
    print(format_advice(adv))
    print(f"rules: {path}" + (f" (a copy of {args.use_rules})" if given else ""))
    points, split_times, failed = verify_runs.verify(
        adv, args.verify, path, mpirun, root=args.root, min_reps=args.min_reps,
        max_reps=args.max_reps, quiet=args.quiet, rounds=args.rounds, budget=args.budget,
        tables=given[0] if given else None,
    )  # fmt: skip
    if points:
        report = verify_runs.format_verified(adv.collective, points, adv, split_times)
        write_output(report + "\n", args.output)
        csv_path = os.path.splitext(args.verify)[0] + ".verify.csv"
        verify_runs.write_csv(
            csv_path, verify_runs.csv_rows(adv.collective, points, adv, split_times)
        )
        print(f"table: {csv_path}")
        if args.plot:
            from ..report.advise_plot import plot_verified

            plot_verified(adv.collective, points, args.plot, split_times)
            print(f"plot: {args.plot}")
    if points and args.measured_rules and not failed:
        write_measured_rules(
            adv.collective, points, args.measured_rules, given[0] if given else None, adv.mpi
        )
    if failed:
        raise CommodelError(
            f"--verify: runs failed: {'; '.join(failed)[:600]}; rerun the same command to "
            "resume them"
        )
    if not points:
        raise CommodelError("--verify: nothing measured to compare")
    return 0


def check_rules(path: str, mpi: str = "openmpi-4.1") -> int:
    if mpi == "mpich":
        return check_mpich_rules(path)
    if mpi == "intel-mpi":
        return check_intel_settings(path)
    from ..advise.rules import read_rules

    result = read_rules(path, version=mpi)
    for p in result.problems:
        sys.stdout.write(f"{path}: {p.kind}: {p}\n")
    label = {"openmpi-4.1": "Open MPI 4.1.4", "openmpi-5.0": "Open MPI 5.0"}[mpi]
    if not result.accepted:
        raise CommodelError(f"{path}: {label} ignores this rules file (see the error above)")
    if not result.ok:
        raise CommodelError(f"{path}: {label} reads this file but an MPI call would fail")
    n_rules = sum(len(c.rules) for t in result.tables for c in t.comm_rules)
    print(
        f"{path}: ok for {label}: {len(result.tables)} collectives, {n_rules} message "
        f"rules, {sum(p.kind == 'warning' for p in result.problems)} warnings"
    )
    return 0


def check_intel_settings(path: str) -> int:
    """--check-rules for Intel MPI: each I_MPI_ADJUST_<COLL> of the settings file read as
    the library reads it, preset ids against the installed build's range when one is
    found."""
    from ..mpis.intelmpi import check_settings, installed_prefix, preset_ranges
    from ..mpis.rules_file import read_rules_bytes

    prefix = installed_prefix()
    ranges = preset_ranges(prefix) if prefix else None
    problems = check_settings(read_rules_bytes(path), path, ranges)
    return report_problems(path, problems, "Intel MPI", "Intel MPI ignores these settings")


def report_problems(path: str, problems: list[tuple[str, str]], label: str, fails: str) -> int:
    """--check-rules' output: each (kind, message) of ``problems``, then an error (``fails``)
    if one is an error, else ``ok for LABEL`` with the number of warnings."""
    for kind, message in problems:
        sys.stdout.write(f"{path}: {kind}: {message}\n")
    if any(kind == "error" for kind, _ in problems):
        raise CommodelError(f"{path}: {fails} (see above)")
    print(f"{path}: ok for {label}: {sum(k == 'warning' for k, _ in problems)} warnings")
    return 0


def check_mpich_rules(path: str) -> int:
    """--check-rules for MPICH: the JSON tuning file read as csel.c reads it."""
    from ..mpis.mpich import builtin_tree, check_json, installed_library
    from ..mpis.rules_file import read_rules_bytes

    data = read_rules_bytes(path)
    try:
        builtin = builtin_tree(installed_library())
    except CommodelError:
        builtin = None
    problems = check_json(data, builtin)
    return report_problems(path, problems, "MPICH 5.0", "MPICH 5.0 fails on this tuning file")
