#!/bin/bash
# Does a longer efficiency measurement narrow e_x between calibrations? On two-rack-8, three
# mpiruns of `measure efficiency` with its default repetitions (5 to 15, until the CI is
# within 5%) and three with 30, alternating, at 4, 16 and 64 KiB; the tables into reps.txt.
# Usage (root, from this directory, the venv active): bash reps.sh
set -u
N=rep8; T=$(mktemp -d)
trap 'commodel cluster down --name $N >/dev/null 2>&1; rm -rf $T' EXIT
commodel cluster up --spec ../../examples/clusters/two-rack-8.yaml --name $N >/dev/null || exit 1
: > reps.txt
for i in 1 2 3; do
  for mode in default 30; do
    opts=""; [ $mode = 30 ] && opts="--min-reps 30 --max-reps 30"
    echo "mpirun $i, repetitions: $mode" >> reps.txt
    commodel cluster mpirun --name $N -- "$(command -v python3)" -m commodel measure efficiency \
      --db $T/e-$mode-$i.duckdb --sizes 4KiB,16KiB,64KiB --fanout-sizes 1KiB --quiet $opts \
      2>/dev/null | tail -4 >> reps.txt
  done
done
