#!/bin/bash
# A fresh verification of the measured rules of the margin pass (../2026-11-27-margin,
# c7d88f5): on two-rack-P, advise --verify --use-rules two-rack-P/C.measured.rules with
# that pass's platform and its settings (--rounds 2 --max-reps 8 --budget 1, 1 KiB..1 MiB).
# Usage (root, from this directory, the venv active): bash run.sh 8; COLLS="c ..." bash
# run.sh 16 (those collectives only, in that order). Writes into two-rack-P/.
set -u
P=${1:?usage: run.sh 8|16}
N=mr$P
mkdir -p two-rack-$P && cd two-rack-$P || exit 1
trap 'commodel cluster down --name $N >/dev/null 2>&1' EXIT
echo "commit $(git rev-parse --short HEAD)"
commodel cluster up --spec "$(git rev-parse --show-toplevel)/examples/clusters/two-rack-$P.yaml" --name $N || exit 1
for c in ${COLLS:-allreduce bcast allgather alltoall}; do
  date -u +"%H:%M:%S start $c"
  commodel advise --platform ../../2026-11-27-margin/two-rack-$P/platform.yaml --collective $c \
    --ranks $P --sizes 1KiB..1MiB --use-rules $c.measured.rules --rules $c.rules \
    --verify verify-$c.duckdb --mpirun "commodel cluster mpirun --name $N --" \
    --max-reps 8 --budget 1 --rounds 2 --quiet --plot $c-verify.png -o $c-verify.txt > $c.log 2>&1
  echo "exit $?"
done
date -u +"%H:%M:%S done"
