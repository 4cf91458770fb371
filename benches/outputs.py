"""Benchmark of the prediction outputs: JSON, summary JSON, Parquet and the Gantt chart.

Schedules: Open MPI's pairwise all-to-all (``alltoall-pairwise``, 1 KiB) at 1024 ranks
(1,047,552 messages) and 1449 ranks (2,098,152 messages), predicted under ``loggops`` on
``loggopsim-default``. Each case runs in its own process: generate the schedule, simulate
with message recording, then write one output to ``bench-out/`` (case ``sim`` writes
nothing: the baseline). Reported per case: CPU and wall seconds of the writing alone (after
the simulation), the peak RSS of the process, and its excess over the ``sim`` case of the
same size. Targets: 2 M messages written (json, parquet) in under 3 s with peak RSS at most
the simulation's own + 50 MB; the Gantt chart of 1024 ranks in under 10 s.

    python benches/outputs.py             # every case
    python benches/outputs.py --quick     # 1024 ranks only
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench-out"
CASES = ["sim", "json", "summary", "parquet", "gantt"]
SIZES = [1024, 1449]
TARGET_WRITE_S = 3.0
TARGET_EXTRA_MIB = 50.0
TARGET_GANTT_S = 10.0


def run_case(case: str, ranks: int) -> dict:
    """In this process: simulate, then write ``case``; the figures as a dict."""
    import commodel
    from commodel.report.gantt import draw_gantt
    from commodel.report.messages_out import write_json, write_parquet
    from commodel.schedules import collective

    schedule = collective("alltoall-pairwise", ranks=ranks, size=1024)
    platform = commodel.load_platform("loggopsim-default")
    cpu0 = time.process_time()
    prediction = commodel.predict(schedule, platform, model="loggops")
    sim_cpu = time.process_time() - cpu0
    cpu0, wall0 = time.process_time(), time.perf_counter()
    path = OUT / f"outputs-{case}-{ranks}"
    if case in ("json", "summary"):
        with open(path.with_suffix(".json"), "w", encoding="utf-8") as handle:
            write_json(prediction, handle, messages=case == "json")
    elif case == "parquet":
        write_parquet(prediction, str(path.with_suffix(".parquet")))
    elif case == "gantt":
        draw_gantt(prediction, str(path.with_suffix(".png")), platform)
    row = {
        "case": case,
        "ranks": ranks,
        "messages": len(prediction.messages),
        "sim_cpu_s": sim_cpu,
        "write_cpu_s": time.process_time() - cpu0,
        "write_wall_s": time.perf_counter() - wall0,
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    for suffix in (".json", ".parquet"):  # hundreds of MB; the PNG is kept to look at
        path.with_suffix(suffix).unlink(missing_ok=True)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1024 ranks only")
    ap.add_argument("--case", help=argparse.SUPPRESS)
    ap.add_argument("--ranks", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--json", type=Path, default=OUT / "outputs.json")
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    if args.case:  # one case, in a process of its own
        print(json.dumps(run_case(args.case, args.ranks)))
        return 0
    rows = []
    for ranks in SIZES[:1] if args.quick else SIZES:
        for case in CASES if ranks == SIZES[0] else ["sim", "json", "parquet"]:
            out = subprocess.run(
                [sys.executable, __file__, "--case", case, "--ranks", str(ranks)],
                check=True,
                capture_output=True,
                text=True,
                env={**os.environ, "MPLBACKEND": "Agg"},
            )
            rows.append(json.loads(out.stdout))
            print(f"  {case} {ranks}: done", file=sys.stderr)
    base = {r["ranks"]: r["peak_mib"] for r in rows if r["case"] == "sim"}
    print(
        "| case | ranks | messages | sim CPU s | write CPU s | write wall s | peak MiB "
        "| over sim MiB | target |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        r["over_sim_mib"] = r["peak_mib"] - base[r["ranks"]]
        target = {
            "json": f"< {TARGET_WRITE_S} s, < {TARGET_EXTRA_MIB:.0f} MiB over sim",
            "parquet": f"< {TARGET_WRITE_S} s, < {TARGET_EXTRA_MIB:.0f} MiB over sim",
            "gantt": f"sim + write < {TARGET_GANTT_S} s",
        }.get(r["case"], "-")
        print(
            f"| {r['case']} | {r['ranks']} | {r['messages']} | {r['sim_cpu_s']:.2f} "
            f"| {r['write_cpu_s']:.2f} "
            f"| {r['write_wall_s']:.2f} | {r['peak_mib']:.0f} | {r['over_sim_mib']:.0f} "
            f"| {target} |"
        )
    args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
