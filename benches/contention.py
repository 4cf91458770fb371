"""Benchmark of the contention models: CPU seconds and peak memory.

Alltoall A and B of PlogPT (``alltoall-xor-pairwise``, ``alltoall-xor-post-all``), 64 KiB
per pair, on two racks of P/2 nodes (1 Gbit/s NICs, 10 us per link) whose backbone uplinks
carry a quarter of a rack's aggregate NIC bandwidth, under ``maxmin`` and ``plogpt``, at
256, 1024 and 4096 ranks. Each case runs in its own process so that its peak RSS
(``ru_maxrss``) and CPU time (user + system) are its own; the figures include building the
schedule, which is reported separately as well. ``--size`` sets the message size; ``tcpflow``
runs with :data:`TCP_SECTION` (a calibrated platform's), and a case run under both ``maxmin``
and ``tcpflow`` also prints their ratio.

With ``--simgrid``, each case of at most ``--simgrid-max-ranks`` ranks also runs side by side
with SimGrid (``benches/simgrid_flows.py``): the schedule is written once as a GOAL file,
then ``commodel predict FILE.goal --model maxmin`` and our s4u program (SimGrid's CM02 with
factors of 1) each run on it in their own process under ``/usr/bin/time -v`` (medians of
``--reps`` runs of wall time and peak RSS, and their ratios); the makespan, every rank's
finish and, up to 256 ranks, every message's end must agree to ``--tolerance`` (relative).
Cases above ``--simgrid-max-ranks`` (1024) run without SimGrid. ``--simgrid-optim Full``
runs SimGrid's exact (non-lazy) update. Without SimGrid installed the bench says so and
prints ours alone.

    python benches/contention.py                 # every case
    python benches/contention.py --ranks 256 1024 --models maxmin
    python benches/contention.py --simgrid --ranks 64 256 1024 --models maxmin --reps 3
    python benches/contention.py --ranks 65536 --algorithms bcast-binomial --models maxmin tcpflow
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import simgrid_flows
from goal_path import COMMODEL, ROOT, timed

SIZE = 65536
NIC = 125e6  # B/s, 1 Gbit/s


# A calibrated `tcp` section (efficiency tables with fan-in, fifo_limit 16384): what
# `calibrate` writes, and what makes `tcpflow` the default model (crates/commodel-engine/
# examples/bench_engine.rs has the same for `bench_engine tcpflow`).
TCP_SECTION = {
    "fifo_limit": 16384,
    "efficiency": {
        "sizes": [4096, 16384, 65536, 262144],
        "exchange": [0.8407, 0.8963, 0.5725, 0.5917],
        "duplex": [0.9516, 0.885, 0.8137, 0.835],
        "fanin": {"peers": 7, "sizes": [4096, 16384, 65536, 262144], "e": [1.0, 0.9, 0.09, 0.33]},
    },
}


def platform(ranks: int, tcp: bool = False) -> dict:
    """The two racks of ``ranks`` nodes; ``tcp``: with :data:`TCP_SECTION`."""
    half = ranks // 2
    extra = {"tcp": TCP_SECTION} if tcp else {}
    return {
        **extra,
        "commodel_platform": 1,
        "name": f"two-racks-{ranks}",
        "nodes": ranks,
        "network": {
            "topology": "racks",
            "racks": [half, half],
            "nic": NIC,
            "nic_latency": 10e-6,
            "backbone": half * NIC / 4,
            "backbone_latency": 10e-6,
        },
        "plogp": {
            "L": 30e-6,
            "sizes": [0, 65536],
            "o_s": [0.0, 0.0],
            "o_r": [0.0, 0.0],
            "g": [10e-6, 10e-6 + 65536 / NIC],
            "S": None,
        },
    }


def one(ranks: int, algorithm: str, model: str, size: int = SIZE) -> dict:
    """One case in this process; ``tcpflow`` on the platform with :data:`TCP_SECTION`."""
    from commodel import _engine
    from commodel.platform import platform_from_dict

    cpu0 = time.process_time()
    sched = _engine.collective(algorithm, ranks, size)
    cpu1 = time.process_time()
    params = platform_from_dict(platform(ranks, tcp=model == "tcpflow")).engine_params(model)
    result = _engine.simulate(sched, model, params, record_messages=False)
    cpu2 = time.process_time()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {
        "ranks": ranks,
        "algorithm": algorithm,
        "model": model,
        "makespan_s": result["makespan_ps"] / 1e12,
        "events": result["events"],
        "schedule_cpu_s": round(cpu1 - cpu0, 3),
        "simulate_cpu_s": round(cpu2 - cpu1, 3),
        "total_cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
    }


def side_by_side(ranks: int, algorithm: str, binary: Path, args: argparse.Namespace) -> bool:
    """One case through `commodel predict FILE.goal --model maxmin` and through SimGrid;
    prints both, the ratios (ours / SimGrid) and the agreement; False if they disagree."""
    import commodel

    messages = ranks <= 256
    with tempfile.TemporaryDirectory(prefix="commodel-simgrid-") as tmp:
        goal, plat, xml = (Path(tmp) / n for n in ("s.goal", "platform.yaml", "platform.xml"))
        subprocess.run(
            [*COMMODEL, "schedule", algorithm, "-P", str(ranks), "-m", str(SIZE), "-o", str(goal)],
            check=True,
            capture_output=True,
        )
        plat.write_text(json.dumps(platform(ranks)))
        xml.write_text(simgrid_flows.platform_xml(platform(ranks)))
        cmd = [*COMMODEL, "predict", str(goal), "--model", "maxmin", "--platform", str(plat)]
        ours = [timed(cmd)[1:] for _ in range(args.reps)]
        sim = [str(binary), str(xml), str(goal), *(["--messages"] if messages else [])]
        sim += [f"--cfg=network/optim:{args.simgrid_optim}", "--log=root.thres:warning"]
        theirs = [timed(sim) for _ in range(args.reps)]
        pred = commodel.predict(goal, str(plat), "maxmin", record_messages=messages)
    med = statistics.median
    our_s, our_m = med(r[0] for r in ours), med(r[1] for r in ours)
    sg_s, sg_m = med(r[1] for r in theirs), med(r[2] for r in theirs)
    worst, count = simgrid_flows.compare(pred, theirs[0][0], messages)
    agree = worst <= args.tolerance
    print(
        f"{ranks:>6} {algorithm:<22} {our_s:>8.2f} {our_m:>8.0f} {sg_s:>9.2f} {sg_m:>8.0f} "
        f"{sg_s / our_s:>8.1f}x {our_m / sg_m:>7.2f} {pred.makespan_s:>11.6f} "
        f"{worst:>9.1e} {count:>8} {'yes' if agree else 'NO'}",
        flush=True,
    )
    return agree


def simgrid_cases(args: argparse.Namespace) -> int:
    binary, why = simgrid_flows.build(ROOT / "bench-out" / "simgrid")
    if binary is None:
        print(f"--simgrid: {why}; no comparison with SimGrid")
        return 0
    print(
        "\nmaxmin through `commodel predict FILE.goal` beside SimGrid (wall s and peak MiB, "
        f"medians of {args.reps}; speed-up = SimGrid / ours; memory = ours / SimGrid; worst "
        "relative difference over the compared times)"
    )
    print(
        f"{'ranks':>6} {'algorithm':<22} {'ours s':>8} {'ours MiB':>8} {'SimGrid s':>9} "
        f"{'SG MiB':>8} {'speed-up':>9} {'memory':>7} {'makespan s':>11} {'worst':>9} "
        f"{'compared':>8} within {args.tolerance:g}"
    )
    failed = False
    for ranks in args.ranks:
        if ranks > args.simgrid_max_ranks:
            continue
        for algorithm in args.algorithms:
            failed |= not side_by_side(ranks, algorithm, binary, args)
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, nargs="+", default=[256, 1024, 4096])
    parser.add_argument("--models", nargs="+", default=["maxmin", "plogpt"])
    parser.add_argument(
        "--algorithms", nargs="+", default=["alltoall-xor-pairwise", "alltoall-xor-post-all"]
    )
    parser.add_argument("--size", type=int, default=SIZE, help=f"bytes (default {SIZE})")
    parser.add_argument("--one", nargs=3, metavar=("RANKS", "ALGORITHM", "MODEL"))
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument(
        "--simgrid", action="store_true", help="also compare maxmin with SimGrid (libsimgrid-dev)"
    )
    parser.add_argument("--simgrid-max-ranks", type=int, default=1024)
    parser.add_argument(
        "--simgrid-optim",
        choices=["Lazy", "Full"],
        default="Lazy",
        help="SimGrid's network/optim (default Lazy, SimGrid's own default)",
    )
    parser.add_argument("--reps", type=int, default=3, help="runs per side (--simgrid)")
    parser.add_argument("--tolerance", type=float, default=1e-6, help="relative (--simgrid)")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(int(args.one[0]), args.one[1], args.one[2], args.size)))
        return 0
    if not args.simgrid:
        print("no --simgrid: our figures alone, no comparison with SimGrid")
    print(
        f"{'ranks':>6} {'algorithm':<22} {'model':<7} {'makespan s':>11} {'sim CPU s':>10} "
        f"{'total CPU s':>11} {'peak MB':>8}"
    )
    for ranks in args.ranks:
        for algorithm in args.algorithms:
            done = {}
            for model in args.models:
                cmd = [sys.executable, __file__, "--one", str(ranks), algorithm, model]
                cmd += ["--size", str(args.size)]
                try:
                    out = subprocess.run(
                        cmd, capture_output=True, text=True, timeout=args.timeout, check=True
                    ).stdout
                except subprocess.TimeoutExpired:
                    print(f"{ranks:>6} {algorithm:<22} {model:<7} timed out after {args.timeout} s")
                    continue
                except subprocess.CalledProcessError as exc:
                    print(f"{ranks:>6} {algorithm:<22} {model:<7} failed: {exc.stderr.strip()}")
                    continue
                r = json.loads(out)
                print(
                    f"{ranks:>6} {algorithm:<22} {model:<7} {r['makespan_s']:>11.6f} "
                    f"{r['simulate_cpu_s']:>10.3f} {r['total_cpu_s']:>11.3f} "
                    f"{r['peak_rss_mb']:>8.1f}",
                    flush=True,
                )
                done[model] = r
            if "tcpflow" in done and "maxmin" in done:
                t, m = done["tcpflow"], done["maxmin"]
                print(
                    f"{ranks:>6} {algorithm:<22} tcpflow / maxmin (this run): simulation CPU "
                    f"{t['simulate_cpu_s'] / max(m['simulate_cpu_s'], 0.001):.2f}x, peak memory "
                    f"{t['peak_rss_mb'] / m['peak_rss_mb']:.2f}x",
                    flush=True,
                )
    return simgrid_cases(args) if args.simgrid else 0


if __name__ == "__main__":
    sys.exit(main())
