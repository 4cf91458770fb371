"""``commodel measure WHAT --db FILE``: the MPI benchmarks, run under mpirun.

Every rank parses the same command line; rank 0 drives the benchmark, writes the results
database and prints; the other ranks stay quiet.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any

from ..units import format_duration
from .common import int_list, size_arg, size_list

HELP = "run an MPI benchmark under mpirun and store every sample in a results database"

MPIRUN_EXAMPLE = (
    "mpirun -n 2 --mca btl tcp,self python3 -m commodel measure plogp --db results.duckdb"
)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", required=True, metavar="FILE", help="results database (DuckDB file)")
    p.add_argument(
        "--resume",
        nargs="?",
        const=-1,
        type=int,
        metavar="ID",
        help="continue campaign ID (default: the latest unfinished one) with the same options",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def register(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "measure",
        help=HELP,
        description="Run an MPI benchmark (under mpirun) and store every raw sample in a "
        f"DuckDB results database. Example: {MPIRUN_EXAMPLE}",
    )
    sub = parser.add_subparsers(dest="benchmark", metavar="WHAT", required=True)

    p = sub.add_parser(
        "plogp",
        help="PLogP parameters L, o_s(m), o_r(m), g(m) (Kielmann's fast method)",
        description="Kielmann's fast PLogP measurement between ranks 0 and 1.",
    )
    _common(p)
    p.add_argument("--mode", choices=("send", "isend", "ssend"), help="send call timed (send)")
    p.add_argument(
        "--method",
        choices=("fast", "saturation"),
        help="fast: g(m) from roundtrips (default); saturation: also g(m) by saturating the "
        "link for every size",
    )
    p.add_argument(
        "--bidirectional", action="store_true", default=None, help="also measure bidirectional g(m)"
    )
    p.add_argument("--eps", type=float, help="relative error bound eps (0.01)")
    p.add_argument("--max-size", type=size_arg, help="largest message size (16MiB)")
    p.add_argument("--k-m", type=int, help="initial sizes 2^0..2^k_m (18)")
    p.add_argument(
        "--sizes",
        type=size_list,
        help="measure exactly these sizes, comma-separated (and 0), instead of Kielmann's "
        "adaptive ones: e.g. to compare --method saturation at a few sizes",
    )
    p.add_argument("--max-reps", type=int, help="repetition cap for small messages (60)")
    p.add_argument("--max-reps-large", type=int, help="repetition cap for large messages (15)")
    p.add_argument(
        "--sat-max-n",
        type=int,
        help="saturation: at most this many messages in a row (16384), and at most 64 MiB",
    )
    p.add_argument(
        "--statistic",
        choices=("median", "mean", "min"),
        help="central value of repetitions (median; Kielmann uses the mean)",
    )
    p.set_defaults(func=run_plogp)

    p = sub.add_parser(
        "tree",
        help="b(h), d(h) of the binary-tree network (PlogPT III-C), on 2^D ranks",
        description="PlogPT's bandwidth b(h) and buffer delay d(h) for every tree height; "
        "one rank per node, ranks in tree order.",
    )
    _common(p)
    p.add_argument("--burst-size", type=size_arg, help="message size of the bursts (1MiB)")
    p.add_argument("--burst-bytes", type=size_arg, help="bytes per flow and burst (16MiB)")
    p.add_argument("--ping-size", type=size_arg, help="ping-pong message size (1)")
    p.add_argument("--pings", type=int, help="ping-pongs per burst (20)")
    p.add_argument("--reps", type=int, help="bursts per height and direction (3)")
    p.add_argument(
        "--unidirectional-only",
        action="store_true",
        help="skip the bidirectional measurement",
    )
    p.add_argument("--statistic", choices=("median", "mean", "min"))
    p.set_defaults(func=run_tree)

    p = sub.add_parser(
        "lmo",
        help="LMO constants C_i, t_i, beta_ij from pair and triple roundtrips (>= 3 ranks)",
        description="Lastovetsky's LMO point-to-point model: per-node fixed and per-byte "
        "delays C_i, t_i and link rates beta_ij, from roundtrips over every pair and triple.",
    )
    _common(p)
    p.add_argument(
        "--sizes",
        type=size_list,
        help="message sizes, comma-separated (0,8KiB,32KiB)",
    )
    p.add_argument("--reps", type=int, help="roundtrips per experiment and size (20)")
    p.add_argument("--statistic", choices=("median", "mean", "min"))
    p.set_defaults(func=run_lmo)

    for direction, what in (
        ("many-to-one", "every other rank sends M bytes to rank 0 (a linear gather)"),
        ("one-to-many", "rank 0 sends M bytes to every other rank (a linear scatter)"),
    ):
        p = sub.add_parser(
            direction,
            help=f"{direction} sweep over sizes M and process counts n (Lastovetsky)",
            description=f"Lastovetsky's {direction} experiments: {what}, for every size and "
            "every process count n (root included), many times.",
        )
        _common(p)
        p.add_argument(
            "--sizes",
            type=size_list,
            help="message sizes M, comma-separated (1KiB .. 128KiB)",
        )
        p.add_argument(
            "--n",
            type=int_list,
            help="process counts n including the root, comma-separated (3..P)",
        )
        p.add_argument("--reps", type=int, help="repetitions per (n, M) (50)")
        if direction == "many-to-one":
            p.add_argument(
                "--receives",
                choices=("sequential", "posted"),
                help="how the root receives: one blocking receive after the other in rank "
                "order, as Open MPI's linear gather does (sequential, the default), or every "
                "receive posted first (posted); they differ above the eager limit",
            )
        else:
            p.set_defaults(receives=None)
        p.set_defaults(func=run_many_to_one, direction=direction)

    p = sub.add_parser(
        "concurrent",
        help="k concurrent flows through one node: fairness, asymmetric property (Zhu 5)",
        description="Zhu et al. section 5: k flows from node X to node Y (one way), and k "
        "flows in with 1 or k out (both ways); reports whether bandwidth is shared fairly "
        "and whether the asymmetric property holds. Ranks are grouped into nodes by host.",
    )
    _common(p)
    p.add_argument("--size", type=size_arg, help="bytes per flow and repetition (16MiB)")
    p.add_argument("--max-k", type=int, help="largest number of flows k (all available)")
    p.add_argument("--max-reps", type=int, help="repetition cap (30)")
    p.set_defaults(func=run_concurrent)

    p = sub.add_parser(
        "efficiency",
        help="TCP's efficiency when traffic runs both ways (for the tcpflow model)",
        description="Rounds of one message per node pair, timed from a synchronized start: "
        "one way (n0->n1, n2->n3, ...), exchanges (n0<->n1, ...) and a ring (n_i -> "
        "n_i+1: every node sends and receives with different peers), at each size; and "
        "all-to-all rounds (every node sends to every other at once, as a linear alltoall) "
        "and fan-outs (n0 posts one message to each of n1, n2, n3 at once). `fit` turns "
        "them into tcp.efficiency (e = one-way time / both-ways time; with the plogp and "
        "network sections, fanin: what the model lacks on the all-to-all rounds) and "
        "tcp.fifo_limit (the largest size a node's NIC sends in posting order). One rank "
        "per host stands for its node.",
    )
    _common(p)
    p.add_argument(
        "--sizes",
        type=size_list,
        help="message sizes, comma-separated (4KiB,16KiB,64KiB,256KiB,1MiB)",
    )
    p.add_argument(
        "--fanout-sizes",
        type=size_list,
        help="sizes of the fan-out rounds (1KiB doubling up to the largest --sizes, at most "
        "256KiB)",
    )
    p.add_argument(
        "--alltoall-sizes",
        type=size_list,
        help="sizes of the all-to-all rounds (4KiB doubling up to the largest --sizes)",
    )
    p.add_argument(
        "--min-reps", type=int, help="repetitions per round and size before the CI test (5)"
    )
    p.add_argument("--max-reps", type=int, help="repetition cap per round and size (15)")
    p.set_defaults(func=run_efficiency)

    p = sub.add_parser(
        "wire",
        help="the bytes a message puts on the wire, counted by the interfaces (for tcpflow)",
        description="Rings of lone messages (node i sends to i+1 and waits for the message "
        "of i-1 before its next send, as a ring collective's steps do) and streams of "
        "long messages, each node's interface counters (tx_bytes, tx_packets) read around "
        "them. `fit` turns them into network.overhead h (a message's bytes beyond m on its "
        "route) and network.ack a (its acknowledgements' bytes on the reverse route), in "
        "units of the fitted payload rate b. One rank per host stands for its node; the "
        "ring needs 3 nodes.",
    )
    _common(p)
    p.add_argument(
        "--sizes",
        type=size_list,
        help="sizes of the rings, comma-separated (256,512,1KiB,2KiB,4KiB)",
    )
    p.add_argument(
        "--stream-size",
        type=size_arg,
        help="message size of the streams, below the eager limit (32KiB)",
    )
    p.add_argument("--reps", type=int, help="repetitions of every round (3)")
    p.add_argument(
        "--interfaces",
        type=lambda text: [x.strip() for x in text.split(",")],
        help="interfaces to count, comma-separated (default: the physical ones in "
        "/sys/class/net, else every one but lo)",
    )
    p.set_defaults(func=run_wire)

    p = sub.add_parser(
        "pattern",
        help="run a GOAL schedule for real (Isend/Irecv/Wait) and time it",
        description="Every rank executes its part of a GOAL schedule with MPI_Isend, "
        "MPI_Irecv and waits in dependency order; repeated until the 95% confidence "
        "interval of the makespan is within 2% of its mean (or --max-reps).",
    )
    p.add_argument("schedule", metavar="SCHEDULE.goal", help="GOAL schedule, one rank per MPI rank")
    _common(p)
    p.add_argument("--max-reps", type=int, help="repetition cap (100)")
    p.add_argument("--timeout", type=float, help="seconds before a stuck run is an error (60)")
    p.set_defaults(func=run_pattern)

    p = sub.add_parser(
        "collective",
        help="time an Open MPI collective over sizes (its default or a forced algorithm)",
        description="Time MPI_Alltoall, Allgather, Allreduce, Bcast, Gather, Scatter or "
        "Barrier over a size range; repeated until the 95% confidence interval is within 2% "
        "of the mean (or --max-reps). The algorithm is whatever mpirun's MCA parameters force "
        "(--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_<coll>_algorithm N), recorded "
        "from the OMPI_MCA_ environment; 'measure collective-sweep' runs every algorithm.",
    )
    _common(p)
    _collective_options(p)
    p.set_defaults(func=run_collective)

    p = sub.add_parser(
        "collective-sweep",
        help="run 'measure collective' once per coll/tuned algorithm (starts mpirun itself)",
        description="Not under mpirun: starts one mpirun per algorithm (Open MPI's default "
        "decision, then every coll/tuned algorithm forced), each a campaign in --db; a "
        "complete campaign with the same options is kept, an unfinished one resumed.",
    )
    p.add_argument("--db", required=True, metavar="FILE", help="results database (DuckDB file)")
    p.add_argument("-n", "--np", type=int, required=True, metavar="P", help="ranks per mpirun")
    p.add_argument(
        "--mpirun",
        default="mpirun",
        metavar="CMD",
        help="mpirun and its options, one string ('mpirun --mca btl tcp,self')",
    )
    p.add_argument(
        "--algorithms",
        type=int_list,
        metavar="N,...",
        help="only these algorithm numbers (0: default decision)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    _collective_options(p)
    p.set_defaults(func=run_collective_sweep)
    return parser


def _collective_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--collective",
        required=True,
        metavar="C",
        help="alltoall, allgather, allreduce, bcast, gather, scatter or barrier",
    )
    p.add_argument(
        "--sizes",
        type=size_list,
        help="sizes per rank as 'commodel schedule --list' counts them (1KiB,2KiB,..,4MiB)",
    )
    p.add_argument("--root", type=int, help="root of bcast, gather, scatter (0)")
    p.add_argument("--min-reps", type=int, help="repetitions before the CI test (5)")
    p.add_argument("--max-reps", type=int, help="repetition cap per size (100)")
    p.add_argument(
        "--budget",
        type=float,
        metavar="SECONDS",
        help="a size whose 95%% interval is still wider than 2%% goes on past --max-reps "
        "until its repetitions have taken SECONDS of wall time (cheap sizes reach their "
        "interval; 0: off, the default)",
    )
    p.add_argument(
        "--splits",
        type=int,
        metavar="K",
        help="gather only: time K MPI_Gather calls of M/K bytes, an MPI_Barrier between "
        "two (the gather-split schedule), instead of one of M (1)",
    )
    p.add_argument(
        "--round",
        type=int,
        metavar="N",
        help="a label kept in the campaign's options, so that the same forcing can be "
        "measured again in another mpirun as a campaign of its own (advise --verify "
        "--rounds; 0)",
    )


def _resume(args: argparse.Namespace) -> tuple[bool, int | None]:
    if args.resume is None:
        return False, None
    return True, (None if args.resume == -1 else args.resume)


def run_plogp(args: argparse.Namespace) -> int:
    from ..measure import plogp
    from ..measure.common import run_campaign

    given = {
        "mode": args.mode,
        "method": args.method,
        "bidirectional": args.bidirectional,
        "eps": args.eps,
        "max_size": args.max_size,
        "k_m": args.k_m,
        "sizes": args.sizes,
        "max_reps_small": args.max_reps,
        "max_reps_large": args.max_reps_large,
        "statistic": args.statistic,
        "sat_max_n": args.sat_max_n,
    }
    opts = plogp.validate_options({k: v for k, v in given.items() if v is not None})
    resume, resume_id = _resume(args)
    code, result = run_campaign(
        "plogp",
        opts,
        args.db,
        plogp.procedure(opts),
        resume=resume,
        resume_id=resume_id,
        command=shlex.join(["commodel"] + sys.argv[1:]),
        progress=not args.quiet,
    )
    if result is not None:
        print(format_plogp(result))
    return code


def _run(
    benchmark: str, procedure: Any, opts: dict[str, Any], args: argparse.Namespace, min_ranks=2
):
    from ..measure.common import run_campaign

    resume, resume_id = _resume(args)
    return run_campaign(
        benchmark,
        opts,
        args.db,
        procedure,
        min_ranks=min_ranks,
        resume=resume,
        resume_id=resume_id,
        command=shlex.join(["commodel"] + sys.argv[1:]),
        progress=not args.quiet,
    )


def run_tree(args: argparse.Namespace) -> int:
    from ..fit.tree import format_table
    from ..measure import tree

    opts = tree.validate_options(
        {
            "burst_size": args.burst_size,
            "burst_bytes": args.burst_bytes,
            "ping_size": args.ping_size,
            "pings": args.pings,
            "reps": args.reps,
            "bidirectional": False if args.unidirectional_only else None,
            "statistic": args.statistic,
        }
    )
    code, result = _run("tree", tree.procedure(opts), opts, args)
    if result is not None:
        print(f"campaign {result['campaign']}: binary tree of {result['ranks']} nodes")
        print(format_table(result["fit"]))
    return code


def run_lmo(args: argparse.Namespace) -> int:
    from ..fit.lmo import format_table
    from ..measure import lmo

    opts = lmo.validate_options(
        {"sizes": args.sizes, "reps": args.reps, "statistic": args.statistic}
    )
    code, result = _run("lmo", lmo.procedure(opts), opts, args, min_ranks=3)
    if result is not None:
        print(f"campaign {result['campaign']}: LMO point-to-point constants")
        print(format_table(result["fit"], result["hosts"]))
    return code


def run_many_to_one(args: argparse.Namespace) -> int:
    from ..measure import manytoone

    opts = manytoone.validate_options(
        {"sizes": args.sizes, "n": args.n, "reps": args.reps, "receives": args.receives},
        args.direction,
    )
    procedure = manytoone.procedure(args.direction, opts)
    code, result = _run(args.direction, procedure, opts, args, min_ranks=3)
    if result is not None:
        print(format_many_to_one(result))
    return code


def format_many_to_one(result: dict[str, Any]) -> str:
    fit = result["fit"]
    lines = [f"campaign {result['campaign']}: {result['direction']}"]
    if result["direction"] == "one-to-many":
        lines.append(
            f"{'M [B]':>10} " + " ".join(f"{'n=' + str(n) + ' [ms]':>12}" for n in fit["n"])
        )
        for j, m in enumerate(fit["sizes"]):
            cells = " ".join(
                f"{fit['time'][i][j] * 1e3:>12.3f}" if fit["time"][i][j] is not None else " " * 12
                for i in range(len(fit["n"]))
            )
            lines.append(f"{m:>10} {cells}")
        return "\n".join(lines)
    for i, n in enumerate(fit["n"]):
        lines.append(
            f"n={n}: linear {fit['linear']['intercept'][i] * 1e6:.1f} us + "
            f"{fit['linear']['slope'][i] * 1e9:.3f} ns/B; M1 = {fit['M1'][i]}, Mc = {fit['Mc'][i]}"
        )
    levels = ", ".join(f"{t * 1e3:.1f} ms" for t in fit["levels"]) or "none"
    lines.append(f"M2 = {fit['M2']}; escalation levels: {levels}")
    return "\n".join(lines)


def run_concurrent(args: argparse.Namespace) -> int:
    from ..measure import concurrent

    opts = concurrent.validate_options(
        {"size": args.size, "max_k": args.max_k, "max_reps": args.max_reps}
    )
    code, result = _run("concurrent", concurrent.procedure(opts), opts, args)
    if result is not None:
        print(concurrent.format_result(result))
    return code


def run_efficiency(args: argparse.Namespace) -> int:
    from ..fit.efficiency import tcp_section
    from ..measure import efficiency

    opts = efficiency.validate_options(
        {
            "sizes": args.sizes,
            "fanout_sizes": args.fanout_sizes,
            "alltoall_sizes": args.alltoall_sizes,
            "min_reps": args.min_reps,
            "max_reps": args.max_reps,
        }
    )
    code, result = _run("efficiency", efficiency.procedure(opts), opts, args)
    if result is not None:
        from ..db import ResultsDB

        with ResultsDB(args.db, read_only=True) as db:
            rows = db.samples(result["campaign"])
        tcp, note = tcp_section(rows)
        print(note)
        section = tcp["efficiency"]
        print("size [B]   e_x (exchange)   e_d (duplex)   (T_ow / T; `fit` with plogp and network "
              "takes them against tcpflow's own one-way time)")  # fmt: skip
        for m, ex, ed in zip(section["sizes"], section["exchange"], section["duplex"]):
            print(f"{m:>9}   {ex:>14.3f}   {ed:>12.3f}")
        from ..fit.fanin import alltoall_spans

        n, spans = alltoall_spans(rows)
        if spans:
            print(f"all-to-all rounds of {n} nodes, mean round time (e_f: `fit` with plogp "
                  "and network)")  # fmt: skip
            for m, t in spans.items():
                print(f"{m:>9}   {t * 1e3:>10.3f} ms")
    return code


def run_wire(args: argparse.Namespace) -> int:
    from ..fit.wire import wire_bytes
    from ..measure import wire

    opts = wire.validate_options(
        {
            "sizes": args.sizes,
            "stream_size": args.stream_size,
            "reps": args.reps,
            "interfaces": args.interfaces,
        }
    )
    code, result = _run("wire", wire.procedure(opts), opts, args, min_ranks=2)
    if result is not None:
        from ..db import ResultsDB

        with ResultsDB(args.db, read_only=True) as db:
            rows = db.samples(result["campaign"])
        _h, _a, note = wire_bytes(rows)
        print(f"campaign {result['campaign']}: {result['rounds']} rounds on {result['nodes']} "
              "nodes")  # fmt: skip
        print(note.replace(": ", ":\n  ", 1).replace("; ", "\n  "))
    return code


def run_pattern(args: argparse.Namespace) -> int:
    import os

    from ..measure import pattern

    opts = pattern.validate_options(
        {
            "schedule": os.path.abspath(args.schedule),
            "max_reps": args.max_reps,
            "timeout": args.timeout,
        }
    )
    code, result = _run("pattern", pattern.procedure(opts), opts, args)
    if result is not None:
        print(
            f"campaign {result['campaign']}: {result['schedule']}: makespan mean "
            f"{format_duration(result['makespan_mean_s'])} (min "
            f"{format_duration(result['makespan_min_s'])}, max "
            f"{format_duration(result['makespan_max_s'])}) over {result['reps']} runs"
            + ("" if result["converged"] else "; the 95% interval is still wider than 2%")
        )
    return code


def _collective_given(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "collective": args.collective,
        "sizes": args.sizes,
        "root": args.root,
        "min_reps": args.min_reps,
        "max_reps": args.max_reps,
        "budget": args.budget,
        "splits": args.splits,
        "round": getattr(args, "round", None),
    }


def run_collective(args: argparse.Namespace) -> int:
    from ..measure import collective

    opts = collective.validate_options(_collective_given(args))
    code, result = _run("collective", collective.procedure(opts), opts, args)
    if result is not None:
        print(collective.format_result(result))
    return code


def run_collective_sweep(args: argparse.Namespace) -> int:
    from ..measure import collective

    given = _collective_given(args)
    collective.validate_options(given, environ={})  # bad options fail before any mpirun
    code = collective.sweep(
        args.db,
        given,
        args.np,
        shlex.split(args.mpirun),
        algorithms=args.algorithms,
        quiet=args.quiet,
    )
    return code


def format_plogp(result: dict[str, Any]) -> str:
    """The printed summary: the PLogP table, Table 1 (LogP/LogGP) and Table 2 (phase times)."""
    fit = result["fit"]
    lines = [
        f"campaign {result['campaign']}: PLogP, mode {fit.mode}, method {fit.method}, "
        f"{result['steps_measured']} steps measured, {result['steps_replayed']} replayed",
        f"L = {format_duration(fit.L)}   g(0) = {format_duration(fit.g0)}   "
        f"RTT(0) = {format_duration(fit.rtt0)}",
        "",
    ]
    head = f"{'m [B]':>10} {'reps':>4} {'o_s [us]':>10} {'o_r [us]':>10} {'g [us]':>10}"
    if fit.g_saturation is not None:
        head += f" {'g_fast [us]':>11} {'g_sat [us]':>10}"
    if fit.g_bidirectional is not None:
        head += f" {'g_bi [us]':>10}"
    lines.append(head)
    for i, m in enumerate(fit.sizes):
        row = (
            f"{m:>10} {fit.reps[i]:>4} {fit.o_s[i] * 1e6:>10.3f} {fit.o_r[i] * 1e6:>10.3f} "
            f"{fit.g[i] * 1e6:>10.3f}"
        )
        if fit.g_saturation is not None:
            row += f" {fit.g_fast[i] * 1e6:>11.3f} {fit.g_saturation[i] * 1e6:>10.3f}"
        if fit.g_bidirectional is not None:
            row += f" {fit.g_bidirectional[i] * 1e6:>10.3f}"
        lines.append(row)
    if 1 in fit.sizes:
        t1 = fit.table1()
        lines += [
            "",
            "LogP/LogGP (Kielmann Table 1): "
            f"L = {format_duration(t1['L'])}, o = {format_duration(t1['o'])}, "
            f"g = {format_duration(t1['g'])}, G = {t1['G']:.4g} s/B, P = {int(t1['P'])}",
        ]
    times = result["phase_times"]
    if times:
        lines += ["", "phase times (Kielmann Table 2):"]
        for phase, t in times.items():
            lines.append(f"  {phase:<14} {t:10.3f} s")
    return "\n".join(lines)
