#!/bin/bash
# run.sh's three commands for other collectives: on two-rack-P, for each C in COLLS
# (default "bcast allgather alltoall"), into two-rack-P/C/. Usage (root, from this
# directory, the venv active): bash run-coll.sh 8
set -u
P=${1:?usage: run-coll.sh 8|16}
N=rc$P
PLAT=../../2026-11-27-margin/two-rack-$P/platform.yaml
trap 'commodel cluster down --name $N >/dev/null 2>&1' EXIT
echo "commit $(git rev-parse --short HEAD)"
commodel cluster up --spec "$(git rev-parse --show-toplevel)/examples/clusters/two-rack-$P.yaml" --name $N || exit 1
RUN="commodel cluster mpirun --name $N --"
for C in ${COLLS:-bcast allgather alltoall}; do
  mkdir -p two-rack-$P/$C && pushd two-rack-$P/$C >/dev/null || exit 1
  commodel advise --platform $PLAT --collective $C --ranks $P --sizes 1KiB..1MiB \
    --rules model.rules > model.txt 2>&1
  echo "$C model exit $?"
  date -u +"%H:%M:%S $C start small"
  commodel advise --platform $PLAT --collective $C --ranks $P --sizes 1KiB..4KiB \
    --verify small.duckdb --mpirun "$RUN" --max-reps 8 --budget 1 --rounds 6 --quiet \
    --use-rules model.rules --measured-rules refined.rules -o small-verify.txt > small.log 2>&1
  echo "$C small exit $?"
  date -u +"%H:%M:%S $C start full"
  commodel advise --platform $PLAT --collective $C --ranks $P --sizes 1KiB..1MiB \
    --verify full.duckdb --mpirun "$RUN" --max-reps 8 --budget 1 --rounds 2 --quiet \
    --use-rules refined.rules --plot full-verify.png -o full-verify.txt > full.log 2>&1
  echo "$C full exit $?"
  popd >/dev/null || exit 1
done
date -u +"%H:%M:%S done"
