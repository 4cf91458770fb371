#!/bin/bash
# advise --verify --rounds 2 where the one-segment rule (docs/models.md, "A message of one
# segment loses nothing") moves a pick of the fresh pass: on two-rack-P with the platform
# that pass calibrated (../two-rack-P/platform.yaml), COLLS at SIZES. Writes into two-rack-P/.
# Usage (root, from this directory, the venv active):
#   COLLS="allgather allreduce bcast" SIZES=1KiB..4KiB bash run.sh 8
set -u
P=${1:?usage: run.sh 8|16}
N=seg$P
mkdir -p two-rack-$P && cd two-rack-$P || exit 1
trap 'commodel cluster down --name $N >/dev/null 2>&1' EXIT
echo "commit $(git rev-parse --short HEAD)"
commodel cluster up --spec ../../../../examples/clusters/two-rack-$P.yaml --name $N || exit 1
for c in ${COLLS:?}; do
  date -u +"%H:%M:%S start $c"
  commodel advise --platform ../../two-rack-$P/platform.yaml --collective $c --ranks $P \
    --sizes ${SIZES:?} --rules $c.rules --verify verify-$c.duckdb \
    --mpirun "commodel cluster mpirun --name $N --" --max-reps ${REPS:-8} --rounds 2 --quiet \
    --plot $c-verify.png -o $c-verify.txt > $c.log 2>&1
  echo "exit $?"
done
date -u +"%H:%M:%S done"
