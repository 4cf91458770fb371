#!/bin/bash
# The target matrix afresh, in one pass with one commit: on two-rack-P (P = 8 or
# 16, token buckets) calibrate, then advise --verify --rounds 2 of alltoall, bcast,
# allgather and allreduce at 1 KiB..1 MiB with that platform. Writes into two-rack-P/.
# Usage (root, from this directory, the venv active): bash run.sh 8; bash run.sh 16
# (bash run.sh P -fair, from another directory: the same on two-rack-P-fair.yaml, into
# two-rack-P-fair/ there; ../2026-11-26-fair-hosts/run.sh; OUT=DIR: into DIR instead;
# COLLS="c ...": those collectives only; REPS=N: --max-reps (8); BUDGET=S: --budget S)
set -u
P=${1:?usage: run.sh 8|16 [SUFFIX]}
SUFFIX=${2:-}
N=fin$P${SUFFIX//-/}
OUT=${OUT:-two-rack-$P$SUFFIX}
TOP=$(git rev-parse --show-toplevel)
mkdir -p $OUT && cd $OUT || exit 1
trap 'commodel cluster down --name $N >/dev/null 2>&1' EXIT
case $P in 8) BUF=32KiB,32KiB,128KiB ;; 16) BUF=32KiB,32KiB,32KiB,128KiB ;; *) exit 2 ;; esac
echo "commit $(git rev-parse --short HEAD)"
commodel cluster up --spec $TOP/examples/clusters/two-rack-$P$SUFFIX.yaml --name $N || exit 1
date -u +"%H:%M:%S calibrate"
commodel cluster mpirun --name $N -- "$(command -v python3)" -m commodel calibrate --db cal.duckdb \
  --parts tcp,plogp,tree,efficiency --buffer $BUF -o platform.yaml > calibrate.log 2>&1
echo "exit $?"
for c in ${COLLS:-alltoall bcast allgather allreduce}; do
  date -u +"%H:%M:%S start $c"
  commodel advise --platform platform.yaml --collective $c --ranks $P --sizes 1KiB..1MiB \
    --rules $c.rules --verify verify-$c.duckdb --mpirun "commodel cluster mpirun --name $N --" \
    --max-reps ${REPS:-8} ${BUDGET:+--budget $BUDGET} --rounds 2 --quiet --plot $c-verify.png -o $c-verify.txt > $c.log 2>&1
  echo "exit $?"
done
date -u +"%H:%M:%S done"
