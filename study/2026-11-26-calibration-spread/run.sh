#!/bin/bash
# How much the advice moves with the calibration: on two-rack-P (P = 8 or 16), K calibrations
# one after the other on one cluster, as ../2026-11-26-final/run.sh makes its one (same
# parts, same --buffer), each with a database of its own: two-rack-P/platform-i.yaml.
# `python3 spread.py` then scores each against that pass's measurements.
# Usage (root, from this directory, the venv active): bash run.sh 8 4; bash run.sh 16 3
set -u
P=${1:?usage: run.sh 8|16 K}; K=${2:-3}
N=spr$P; OUT=two-rack-$P
mkdir -p $OUT && cd $OUT || exit 1
trap 'commodel cluster down --name $N >/dev/null 2>&1' EXIT
case $P in 8) BUF=32KiB,32KiB,128KiB ;; 16) BUF=32KiB,32KiB,32KiB,128KiB ;; *) exit 2 ;; esac
echo "commit $(git rev-parse --short HEAD)"
commodel cluster up --spec ../../../examples/clusters/two-rack-$P.yaml --name $N >/dev/null || exit 1
for i in $(seq 1 $K); do
  date -u +"%H:%M:%S calibrate $i"
  commodel cluster mpirun --name $N -- "$(command -v python3)" -m commodel calibrate \
    --db cal-$i.duckdb --parts tcp,plogp,tree,efficiency --buffer $BUF -o platform-$i.yaml \
    > calibrate-$i.log 2>&1
  echo "exit $?"
done
date -u +"%H:%M:%S done"
