#!/bin/bash
# PLogP's overheads on two-rack-16 with the other 14 ranks idle in the run (-n 16, as
# `calibrate` runs it) or absent (-n 2): `calibrate --parts plogp`, alternately, ROUNDS
# times, on one cluster. Rank 0 and rank 1 (h0, h1) measure in both.
# Usage (root, from this directory, the venv active): [ROUNDS=2] bash run.sh
set -u
N=idle16
TOP=$(git rev-parse --show-toplevel)
trap 'commodel cluster down --name $N >/dev/null 2>&1' EXIT
commodel cluster up --spec $TOP/examples/clusters/two-rack-16.yaml --name $N || exit 1
for r in $(seq 1 ${ROUNDS:-2}); do
  for n in 16 2; do
    date -u +"%H:%M:%S n=$n round $r"
    commodel cluster mpirun --name $N -n $n -- "$(command -v python3)" -m commodel calibrate \
      --db n$n-$r.duckdb --parts plogp -o platform-n$n-$r.yaml > calibrate-n$n-$r.log 2>&1
    echo "exit $?"
  done
done
date -u +"%H:%M:%S done"
