#!/bin/bash
# The target matrix with h and a fitted by calibrate (99d1256): on two-rack-P (P = 8 or
# 16) `calibrate` with the wire part, then advise --verify --rounds 2 --max-reps 8
# --budget 1 at 1 KiB..1 MiB, as ../2026-11-26-final/run.sh does. Writes into two-rack-P/.
# Usage (root, from this directory, the venv active): bash run.sh 8; COLLS="c ..." bash
# run.sh 16 (those collectives only, in that order)
set -u
P=${1:?usage: run.sh 8|16}
N=wfp$P
TOP=$(git rev-parse --show-toplevel)
mkdir -p two-rack-$P && cd two-rack-$P || exit 1
trap 'commodel cluster down --name $N >/dev/null 2>&1' EXIT
case $P in 8) BUF=32KiB,32KiB,128KiB ;; 16) BUF=32KiB,32KiB,32KiB,128KiB ;; *) exit 2 ;; esac
echo "commit $(git rev-parse --short HEAD)"
commodel cluster up --spec $TOP/examples/clusters/two-rack-$P.yaml --name $N || exit 1
date -u +"%H:%M:%S calibrate"
commodel cluster mpirun --name $N -- "$(command -v python3)" -m commodel calibrate --db cal.duckdb \
  --parts tcp,plogp,tree,efficiency,wire --buffer $BUF -o platform.yaml > calibrate.log 2>&1
echo "exit $?"
for c in ${COLLS:-alltoall bcast allgather allreduce}; do
  date -u +"%H:%M:%S start $c"
  commodel advise --platform platform.yaml --collective $c --ranks $P --sizes 1KiB..1MiB \
    --rules $c.rules --verify verify-$c.duckdb --mpirun "commodel cluster mpirun --name $N --" \
    --max-reps 8 --budget 1 --rounds 2 --quiet --plot $c-verify.png -o $c-verify.txt > $c.log 2>&1
  echo "exit $?"
done
date -u +"%H:%M:%S done"
