#!/bin/bash
# PLogP on two-rack-16 with the idle ranks waiting outside real-time scheduling (the
# harness's sits_out, commodel.measure.common.out_of_realtime): `calibrate --parts plogp`
# under `cluster mpirun -n 16` and -n 2, in turn, ROUNDS times, on one cluster. Ranks 0
# and 1 (h0, h1) measure in both; with -n 16 ranks 2..15 sit every step out.
# Usage (root, from this directory, the venv active): [ROUNDS=2] bash run.sh
set -u
N=inort16
TOP=$(git rev-parse --show-toplevel)
trap 'commodel cluster down --name $N >/dev/null 2>&1' EXIT
commodel cluster up --spec $TOP/examples/clusters/two-rack-16.yaml --name $N || exit 1
for r in $(seq 1 ${ROUNDS:-2}); do
  for n in 16 2; do
    run=sitout-n$n
    date -u +"%H:%M:%S $run round $r"
    commodel cluster mpirun --name $N -n $n -- \
      "$(command -v python3)" -m commodel calibrate --db $run-$r.duckdb --parts plogp \
      -o platform-$run-$r.yaml > calibrate-$run-$r.log 2>&1
    echo "exit $?"
  done
done
date -u +"%H:%M:%S done"
