"""Benchmark of the contention models: CPU seconds and peak memory.

Alltoall A and B of PlogPT (``alltoall-xor-pairwise``, ``alltoall-xor-post-all``), 64 KiB
per pair, on two racks of P/2 nodes (1 Gbit/s NICs, 10 us per link) whose backbone uplinks
carry a quarter of a rack's aggregate NIC bandwidth, under ``maxmin`` and ``plogpt``, at
256, 1024 and 4096 ranks. Each case runs in its own process so that its peak RSS
(``ru_maxrss``) and CPU time (user + system) are its own; the figures include building the
schedule, which is reported separately as well.

    python benches/contention.py                 # every case
    python benches/contention.py --ranks 256 1024 --models maxmin
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

SIZE = 65536
NIC = 125e6  # B/s, 1 Gbit/s


def platform(ranks: int) -> dict:
    half = ranks // 2
    return {
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


def one(ranks: int, algorithm: str, model: str) -> dict:
    from commodel import _engine
    from commodel.platform import platform_from_dict

    cpu0 = time.process_time()
    sched = _engine.collective(algorithm, ranks, SIZE)
    cpu1 = time.process_time()
    params = platform_from_dict(platform(ranks)).engine_params(model)
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, nargs="+", default=[256, 1024, 4096])
    parser.add_argument("--models", nargs="+", default=["maxmin", "plogpt"])
    parser.add_argument(
        "--algorithms", nargs="+", default=["alltoall-xor-pairwise", "alltoall-xor-post-all"]
    )
    parser.add_argument("--one", nargs=3, metavar=("RANKS", "ALGORITHM", "MODEL"))
    parser.add_argument("--timeout", type=float, default=900.0)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(int(args.one[0]), args.one[1], args.one[2])))
        return 0
    print(
        f"{'ranks':>6} {'algorithm':<22} {'model':<7} {'makespan s':>11} {'sim CPU s':>10} "
        f"{'total CPU s':>11} {'peak MB':>8}"
    )
    for ranks in args.ranks:
        for algorithm in args.algorithms:
            for model in args.models:
                cmd = [sys.executable, __file__, "--one", str(ranks), algorithm, model]
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
