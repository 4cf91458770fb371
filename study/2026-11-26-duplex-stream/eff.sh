#!/bin/bash
# measure efficiency twice on two-rack-8 (15 and 40 repetitions per round), quiet machine
set -u
cd "$(dirname "$0")"
PY=$(command -v python3)
trap 'commodel cluster down --name tr8 >/dev/null 2>&1' EXIT
commodel cluster up --spec ../../examples/clusters/two-rack-8.yaml --name tr8 >/dev/null || exit 1
exec > >(tee eff.log) 2>&1
rm -f eff8.duckdb
for reps in 15 40; do
  date -u +"%H:%M:%S efficiency max-reps $reps"
  commodel cluster mpirun --name tr8 -- "$PY" -m commodel measure efficiency --db eff8.duckdb --quiet \
    --sizes 4KiB,8KiB,16KiB,64KiB,256KiB --fanout-sizes 1KiB --max-reps $reps
done
date -u +"%H:%M:%S done"
