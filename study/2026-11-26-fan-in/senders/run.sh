#!/bin/bash
# Rounds with k senders into every node (kshift.py) on two-rack-8, k = 1, 2, 3, 5, 7, at 64
# and 128 KiB, each timed by `measure pattern` (REPS repetitions, default 100) in its own mpirun:
# the test of fan-in's linear weight in k. Writes senders.duckdb and run.log here.
# Usage (root, from this directory, the venv active): bash run.sh
set -u
N=fanks
TOP=$(git rev-parse --show-toplevel)
trap 'commodel cluster down --name $N >/dev/null 2>&1' EXIT
commodel cluster up --spec $TOP/examples/clusters/two-rack-8.yaml --name $N || exit 1
for m in 65536 131072; do
  for k in 1 2 3 5 7; do
    python3 kshift.py 8 $k $m > k$k-m$m.goal
    echo "k $k m $m $(date -u +%H:%M:%S)"
    commodel cluster mpirun --name $N -- "$(command -v python3)" -m commodel measure pattern \
      k$k-m$m.goal --db senders.duckdb --max-reps ${REPS:-100} --quiet 2>&1 | grep -v setpgid
  done
done
