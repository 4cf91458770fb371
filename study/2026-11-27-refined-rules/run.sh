#!/bin/bash
# docs/advise.md's three commands for allreduce on two-rack-P, with the margin pass's
# platform (../2026-11-27-margin): the model's rules over 1 KiB..1 MiB; 1-4 KiB verified
# in 6 rounds over them, writing the refined rules; the refined rules verified over
# 1 KiB..1 MiB in 2 rounds, as the target matrix is. Usage (root, from this directory,
# the venv active): bash run.sh 8; bash run.sh 16. Writes into two-rack-P/.
set -u
P=${1:?usage: run.sh 8|16}
N=rr$P
PLAT=../../2026-11-27-margin/two-rack-$P/platform.yaml
mkdir -p two-rack-$P && cd two-rack-$P || exit 1
trap 'commodel cluster down --name $N >/dev/null 2>&1' EXIT
echo "commit $(git rev-parse --short HEAD)"
commodel cluster up --spec "$(git rev-parse --show-toplevel)/examples/clusters/two-rack-$P.yaml" --name $N || exit 1
RUN="commodel cluster mpirun --name $N --"
commodel advise --platform $PLAT --collective allreduce --ranks $P --sizes 1KiB..1MiB \
  --rules model.rules > model.txt 2>&1
echo "model exit $?"
date -u +"%H:%M:%S start small"
commodel advise --platform $PLAT --collective allreduce --ranks $P --sizes 1KiB..4KiB \
  --verify small.duckdb --mpirun "$RUN" --max-reps 8 --budget 1 --rounds 6 --quiet \
  --use-rules model.rules --measured-rules refined.rules -o small-verify.txt > small.log 2>&1
echo "small exit $?"
date -u +"%H:%M:%S start full"
commodel advise --platform $PLAT --collective allreduce --ranks $P --sizes 1KiB..1MiB \
  --verify full.duckdb --mpirun "$RUN" --max-reps 8 --budget 1 --rounds 2 --quiet \
  --use-rules refined.rules --plot full-verify.png -o full-verify.txt > full.log 2>&1
echo "full exit $?"
date -u +"%H:%M:%S done"
