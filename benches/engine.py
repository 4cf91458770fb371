"""Benchmark of the event engine under ``loggops``: events per CPU second and peak memory.

Cases (64 KiB messages): alltoall-xor-pairwise and alltoall-xor-post-all at 1024 and 4096
ranks, alltoall-basic-linear at 1024 ranks, bcast-binomial and allreduce-recursive-doubling
at 65536 ranks. Each case runs ``--reps`` times in its own process (the release build of
``crates/commodel-engine/examples/bench_engine.rs``), so its peak RSS is its own; medians
are reported. Events are counted as LogGOPSim counts them (operations plus transfers).

Ratios are against a baseline measured in the same run: the pairwise all-to-all at 1024
ranks (events per CPU second). The post-all variant posts every receive up front; its ratio
near 1 shows that matching does not scan queues. LogGOPSim's reference figures for this machine
kind (measured outside this repository, not in this run) are printed beside ours for reference.

    python benches/engine.py                  # every case, 3 repetitions
    python benches/engine.py --quick          # 1024-rank cases only, 1 repetition
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
BIN = TARGET / "release" / "examples" / "bench_engine"

CASES = [
    ("alltoall-xor-pairwise", 1024),
    ("alltoall-xor-post-all", 1024),
    ("alltoall-basic-linear", 1024),
    ("alltoall-xor-pairwise", 4096),
    ("alltoall-xor-post-all", 4096),
    ("bcast-binomial", 65536),
    ("allreduce-recursive-doubling", 65536),
]
SIZE = 65536

# LogGOPSim on this machine kind, measured outside this repository: (events, CPU seconds, peak MiB or None).
LOGGOPSIM = {
    ("alltoall-xor-pairwise", 1024): (3.1e6, 1.34, None),
    ("alltoall-xor-post-all", 1024): (3.1e6, 2.7, None),
    ("alltoall-xor-pairwise", 4096): (50e6, 28.0, 1.5 * 1024),
    ("alltoall-basic-linear", 1024): (3.1e6, 670.0, None),
}


def build() -> None:
    subprocess.run(
        ["cargo", "build", "--release", "-q", "-p", "commodel-engine", "--example", "bench_engine"],
        cwd=ROOT,
        check=True,
    )


def run_case(name: str, ranks: int) -> dict:
    out = subprocess.run(
        [str(BIN), "loggops", name, str(ranks), str(SIZE)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="1024-rank cases, one repetition")
    ap.add_argument("--json", type=Path, default=ROOT / "bench-out" / "engine.json")
    args = ap.parse_args()
    cases = [c for c in CASES if c[1] == 1024] if args.quick else CASES
    reps = 1 if args.quick else args.reps
    build()
    rows = []
    for name, ranks in cases:
        runs = [run_case(name, ranks) for _ in range(reps)]
        row = {
            "collective": name,
            "ranks": ranks,
            "events": runs[0]["events"],
            "sim_cpu_s": statistics.median(r["sim_cpu_s"] for r in runs),
            "gen_cpu_s": statistics.median(r["gen_cpu_s"] for r in runs),
            "events_per_cpu_s": statistics.median(r["events_per_cpu_s"] for r in runs),
            "sim_peak_mib": statistics.median(r["sim_peak_rss_mib"] for r in runs),
            "peak_mib": statistics.median(r["peak_rss_mib"] for r in runs),
        }
        rows.append(row)
        print(
            f"  {name} {ranks}: {row['events_per_cpu_s'] / 1e6:.2f} M events/CPU-s", file=sys.stderr
        )
    base = next(r for r in rows if (r["collective"], r["ranks"]) == ("alltoall-xor-pairwise", 1024))
    print(
        "| case | events | sim CPU s | M events/CPU-s | vs baseline | sim peak MiB | peak MiB (with generation) "
        "| LogGOPSim M ev/s | ours / LogGOPSim |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        ref = LOGGOPSIM.get((r["collective"], r["ranks"]))
        rate = r["events_per_cpu_s"]
        ref_rate = ref[0] / ref[1] if ref else None
        ref_txt = f"{ref_rate / 1e6:.2f}" if ref_rate else "-"
        ratio_txt = f"{rate / ref_rate:.2f}x" if ref_rate else "-"
        print(
            f"| {r['collective']} P={r['ranks']} | {r['events'] / 1e6:.2f} M | {r['sim_cpu_s']:.2f} "
            f"| {rate / 1e6:.2f} | {rate / base['events_per_cpu_s']:.2f} "
            f"| {r['sim_peak_mib']:.0f} | {r['peak_mib']:.0f} | {ref_txt} | {ratio_txt} |"
        )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
