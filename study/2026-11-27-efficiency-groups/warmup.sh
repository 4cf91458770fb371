#!/bin/bash
# The first repetitions of `measure efficiency`'s first round (one-way, 4 KiB) on
# two-rack-16, after the untimed warm-up: the first flow of the calibration's round had
# taken 3.866 ms. Into warmup.log.
# Usage (root, the venv active, from this directory): bash warmup.sh
set -u
N=wfw16
TOP=$(git rev-parse --show-toplevel)
W=$(mktemp -d)
trap 'commodel cluster down --name $N >/dev/null 2>&1; rm -rf $W' EXIT
commodel cluster up --spec $TOP/examples/clusters/two-rack-16.yaml --name $N > /dev/null || exit 1
commodel cluster mpirun --name $N -- "$(command -v python3)" -m commodel measure efficiency \
  --db $W/w.duckdb --sizes 4KiB --alltoall-sizes 4KiB --fanout-sizes 1KiB --quiet 2>&1 \
  | grep -v setpgid | head -2
python3 - $W/w.duckdb <<'PY'
import sys
from commodel.db import ResultsDB
with ResultsDB(sys.argv[1], read_only=True) as db:
    rows = [s for s in db.samples(1) if s["phase"] == "efficiency" and s["pattern"] == "oneway"]
first = [round(s["value_s"] * 1e3, 3) for s in rows if s["src"] == 0][:5]
rest = sorted(round(s["value_s"] * 1e3, 3) for s in rows)
print(f"first group (0 -> 1), first 5 repetitions, ms: {first}")
print(f"all one-way flows at 4 KiB: {len(rest)}, min {rest[0]}, median {rest[len(rest) // 2]}, max {rest[-1]} ms")
PY
