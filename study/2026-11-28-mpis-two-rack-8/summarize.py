"""Per MPI and collective, from advise --verify's CSVs and reports in DIR: the points where
our choice is within 5% of the measured best (or runs the best one's schedule), whether the
default was ever faster than ours beyond the run-to-run spread, and the median and largest
speedup over the MPI's default with their 95% intervals. Usage: python summarize.py DIR"""

import csv
import os
import re
import sys

out = sys.argv[1]
print(
    "| MPI | collective | within 5% of the best | (a) never slower than the default | "
    "median speedup [95% CI] | largest speedup [95% CI] | rules fired |"
)
print("|---|---|---|---|---|---|---|")
RUNS = (
    ("openmpi-4.1", "openmpi-4.1"),
    ("openmpi-5.0", "openmpi-5.0"),
    ("mpich", "mpich"),
    ("mpich, advised from Open MPI 5's platform (cross.sh)", "mpich-x"),
    ("intel-mpi", "intel-mpi"),
)
for label, mpi in RUNS:
    for coll in ("alltoall", "allreduce", "bcast", "allgather"):
        path = os.path.join(out, f"verify-{mpi}-{coll}.verify.csv")
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        with open(os.path.join(out, f"{mpi}-{coll}-verify.txt"), encoding="utf-8") as fh:
            report = fh.read()
        ok = sum(r["within_5pct"] == "True" or r["alike_best"] == "True" for r in rows)
        a = re.search(r"^\(a\)[^:]*: (.*)$", report, re.M).group(1)
        fired = re.search(r"^rules fired: .* at (\d+/\d+) points", report, re.M)
        ordered = sorted(rows, key=lambda r: float(r["speedup"]))
        mid, top = ordered[(len(ordered) - 1) // 2], ordered[-1]

        def fmt(r):
            lo, hi = r["speedup_lo"], r["speedup_hi"]
            ci = f"[{float(lo):.2f}, {float(hi):.2f}]" if lo and hi else "[-]"
            return f"{float(r['speedup']):.2f} {ci} ({int(r['size']) // 1024} KiB)"

        print(
            f"| {label} | {coll} | {ok}/{len(rows)} | {a.split(';')[0]} | {fmt(mid)} | "
            f"{fmt(top)} | {fired.group(1) if fired else 'not counted'} |"
        )
