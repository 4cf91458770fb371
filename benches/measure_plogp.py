"""Benchmark: Kielmann's fast PLogP measurement against the saturation method.

Runs ``commodel measure plogp --method saturation`` from 1 B to 4 MiB on 2 ranks over
loopback TCP (Open MPI, ``--mca btl tcp,self``); the campaign times its phases, so one run
gives both methods: the fast method costs the ``g0`` and ``roundtrip`` phases (g(m) from
roundtrips), the saturation method the ``saturation`` phase (g(m) by saturating the link
for every size) - Kielmann's Table 2. Prints the times, their ratio (Kielmann: 10x on
Myrinet, 17x on TCP; our target >= 10x) and the largest relative difference of g(m)
between the methods (target <= 5%), and writes bench-out/measure_plogp.json.

Usage: python benches/measure_plogp.py [--max-size 4MiB] [--eps 0.05] [--statistic median]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-size", default="4MiB")
    ap.add_argument("--eps", default="0.05")
    ap.add_argument("--statistic", default="median")
    ap.add_argument("--out", default=str(ROOT / "bench-out" / "measure_plogp.json"))
    args = ap.parse_args()
    env = dict(os.environ)
    env.update(
        OMPI_ALLOW_RUN_AS_ROOT="1",
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
        OMPI_MCA_btl="tcp,self",
        OMPI_MCA_btl_tcp_if_include="lo",
        OMPI_MCA_oob_tcp_if_include="lo",
        PYTHONPATH=str(ROOT / "python") + os.pathsep + env.get("PYTHONPATH", ""),
    )
    sys.path.insert(0, str(ROOT / "python"))
    from commodel.db import ResultsDB
    from commodel.fit.plogp import fit_plogp

    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "bench.duckdb")
        cmd = ["mpirun", "-n", "2", "--oversubscribe"]
        if os.geteuid() == 0:
            cmd.append("--allow-run-as-root")
        k_m = 22
        cmd += [sys.executable, "-m", "commodel", "measure", "plogp", "--db", db,
                "--method", "saturation", "--max-size", args.max_size, "--k-m", str(k_m),
                "--eps", args.eps, "--statistic", args.statistic, "--quiet"]  # fmt: skip
        start = time.monotonic()
        res = subprocess.run(cmd, env=env, capture_output=True, text=True)
        wall = time.monotonic() - start
        if res.returncode != 0:
            sys.stderr.write(res.stdout + res.stderr)
            return 1
        with ResultsDB(db, read_only=True) as rdb:
            (camp,) = rdb.campaigns()
            phases = rdb.phase_times(camp.id)
            fit = fit_plogp(rdb.samples(camp.id), camp.options, camp.ranks)
    fast = phases.get("g0", 0.0) + phases.get("roundtrip", 0.0)
    sat = phases.get("saturation", 0.0)
    diffs = [
        (m, abs(f - s) / s)
        for m, f, s in zip(fit.sizes, fit.g_fast, fit.g_saturation)
        if m >= 1 and s > 0
    ]
    worst = max(diffs, key=lambda x: x[1])
    big = [d for m, d in diffs if m >= 65536]
    result = {
        "max_size": args.max_size,
        "eps": float(args.eps),
        "statistic": args.statistic,
        "sizes": len(fit.sizes),
        "fast_s": fast,
        "saturation_s": sat,
        "speedup": sat / fast if fast > 0 else None,
        "largest_g_difference": {"size": worst[0], "relative": worst[1]},
        "largest_g_difference_from_64KiB": max(big) if big else None,
        "wall_s": wall,
        "phases_s": phases,
    }
    print(f"PLogP 1 B .. {args.max_size}, 2 ranks, loopback TCP, {len(fit.sizes)} sizes")
    print(f"  fast method (g0 + roundtrips):  {fast:8.2f} s")
    print(f"  saturation method (g(m > 0)):   {sat:8.2f} s")
    print(f"  speed-up:                       {result['speedup']:8.1f} x   (target >= 10x)")
    print(
        f"  largest |g_fast - g_sat| / g_sat: {worst[1] * 100:.1f}% at m = {worst[0]} B"
        f"   (target <= 5%)"
    )
    if big:
        print(f"  largest difference for m >= 64 KiB: {max(big) * 100:.1f}%")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(f"  written {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
