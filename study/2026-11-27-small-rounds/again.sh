#!/bin/bash
# The rules that run.sh's measurements picked (two-rack-P/allreduce.measured.rules),
# verified afresh the same way (6 rounds, 1-4 KiB): advise --verify --use-rules into
# two-rack-P/again/. Usage (root, from this directory, the venv active): bash again.sh 8
set -u
P=${1:?usage: again.sh 8|16}
N=sa$P
mkdir -p two-rack-$P/again && cd two-rack-$P/again || exit 1
trap 'commodel cluster down --name $N >/dev/null 2>&1' EXIT
echo "commit $(git rev-parse --short HEAD)"
commodel cluster up --spec "$(git rev-parse --show-toplevel)/examples/clusters/two-rack-$P.yaml" --name $N || exit 1
date -u +"%H:%M:%S start"
commodel advise --platform ../../2026-11-27-margin/two-rack-$P/platform.yaml --collective allreduce \
  --ranks $P --sizes 1KiB,2KiB,4KiB --use-rules ../allreduce.measured.rules --rules allreduce.rules \
  --verify verify-allreduce.duckdb --mpirun "commodel cluster mpirun --name $N --" --max-reps 8 \
  --budget 1 --rounds 6 --quiet --plot allreduce-verify.png -o allreduce-verify.txt > allreduce.log 2>&1
echo "exit $?"
date -u +"%H:%M:%S done"
