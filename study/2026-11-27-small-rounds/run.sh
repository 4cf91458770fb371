#!/bin/bash
# Allreduce at 1, 2 and 4 KiB, the sizes of issue 11's (b) point, in 6 rounds: on
# two-rack-P, advise --verify --rounds 6 with the margin pass's platform
# (../2026-11-27-margin) and this commit's advice, plus the rules these measurements pick
# (--measured-rules). Usage (root, from this directory, the venv active): bash run.sh 8;
# bash run.sh 16. Writes into two-rack-P/.
set -u
P=${1:?usage: run.sh 8|16}
N=sr$P
mkdir -p two-rack-$P && cd two-rack-$P || exit 1
trap 'commodel cluster down --name $N >/dev/null 2>&1' EXIT
echo "commit $(git rev-parse --short HEAD)"
commodel cluster up --spec "$(git rev-parse --show-toplevel)/examples/clusters/two-rack-$P.yaml" --name $N || exit 1
date -u +"%H:%M:%S start"
commodel advise --platform ../../2026-11-27-margin/two-rack-$P/platform.yaml --collective allreduce \
  --ranks $P --sizes 1KiB,2KiB,4KiB --rules allreduce.rules --verify verify-allreduce.duckdb \
  --mpirun "commodel cluster mpirun --name $N --" --max-reps 8 --budget 1 --rounds 6 --quiet \
  --measured-rules allreduce.measured.rules --plot allreduce-verify.png -o allreduce-verify.txt \
  > allreduce.log 2>&1
echo "exit $?"
date -u +"%H:%M:%S done"
