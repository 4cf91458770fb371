"""Benchmark of sweeps on MPI workers: one ``advise`` sweep in one process (``--jobs 1``)
and under ``mpiexec -n N+1 python -m mpi4py.futures -m commodel advise ... --executor mpi``
(N workers), each ``--reps`` times; prints the median wall seconds, the speed-up over one
process, whether the output is byte for byte the same (it must be), and the executor's
start-up (one prediction under ``mpiexec`` less the same in one process).

The sweep: every alltoall algorithm at 64 and 128 ranks and 1 KiB .. 64 KiB on the two
racks of ``benches/contention.py`` (128 nodes) with its calibrated ``tcp`` section, under
its default model (``tcpflow``).

    python benches/sweep.py                      # 1, 2, 4 and 8 workers, 3 runs each
    python benches/sweep.py --workers 1 2 --reps 5
    python benches/sweep.py --ranks 48,64,96,128     # a larger sweep
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from contention import platform

COMMODEL = [sys.executable, "-m", "commodel"]


def sweep_args(plat: Path, ranks: str = "64,128", sizes: str = "1KiB..64KiB") -> list[str]:
    return [
        "advise",
        "--platform",
        str(plat),
        "--collective",
        "alltoall",
        "--ranks",
        ranks,
        "--sizes",
        sizes,
    ]


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    run = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if run.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{run.stderr[-2000:]}")
    return wall, run.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--ranks", default="64,128", help="the sweep's communicator sizes")
    parser.add_argument("--sizes", default="1KiB..64KiB", help="the sweep's sizes")
    args = parser.parse_args()
    if shutil.which("mpiexec") is None:
        print("sweep: mpiexec not found (Open MPI: make deps); no MPI sweep")
        return 0
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env["OMPI_MCA_btl"] = "tcp,self"
    env["OMPI_MCA_btl_tcp_if_include"] = "lo"
    env["OMPI_MCA_oob_tcp_if_include"] = "lo"
    with tempfile.TemporaryDirectory(prefix="commodel-sweep-") as tmp:
        plat = Path(tmp) / "two-racks-64.yaml"
        plat.write_text(json.dumps(platform(128, tcp=True)))
        sweep = sweep_args(plat, args.ranks, args.sizes)
        cmd = [*COMMODEL, *sweep]
        base = [timed([*cmd, "--jobs", "1"], env) for _ in range(args.reps)]
        one = statistics.median(w for w, _ in base)
        want = base[0][1]
        print(f"advise sweep ({want.count(chr(10))} lines of output); medians of {args.reps}")
        print(f"{'executor':<28} {'wall s':>8} {'speed-up':>9} same output")
        print(f"{'one process, --jobs 1':<28} {one:>8.2f} {1.0:>8.2f}x yes")
        for n in args.workers:
            head = ["mpiexec", "-n", str(n + 1), "--oversubscribe"]
            mpi = [*head, sys.executable, "-m", "mpi4py.futures", "-m", "commodel"]
            # the fixed cost of the executor: one prediction (4 ranks, 1 KiB), here and there
            tiny = sweep_args(plat, "4", "1KiB")
            alone = statistics.median(
                timed([*COMMODEL, *tiny, "--jobs", "1"], env)[0] for _ in range(args.reps)
            )
            there = statistics.median(
                timed([*mpi, *tiny, "--executor", "mpi"], env)[0] for _ in range(args.reps)
            )
            runs = [timed([*mpi, *sweep, "--executor", "mpi"], env) for _ in range(args.reps)]
            wall = statistics.median(w for w, _ in runs)
            same = all(out == want for _, out in runs)
            print(
                f"{f'mpi4py.futures, {n} workers':<28} {wall:>8.2f} {one / wall:>8.2f}x "
                f"{'yes' if same else 'NO'}  (start-up {there - alone:.2f} s: one prediction "
                f"{there:.2f} s against {alone:.2f} s in one process)"
            )
            if not same:
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
