#!/bin/bash
# Step 3 of run.sh again: the allreduce rules run.sh refined on two-rack-P
# (two-rack-P/refined.rules, unchanged) verified afresh over 1 KiB..1 MiB in 2 rounds,
# into two-rack-P/again/. Usage (root, from this directory, the venv active):
# bash again.sh 16
set -u
P=${1:?usage: again.sh 8|16}
N=ra$P
PLAT=../../2026-11-27-margin/two-rack-$P/platform.yaml
mkdir -p two-rack-$P/again && cd two-rack-$P/again || exit 1
trap 'commodel cluster down --name $N >/dev/null 2>&1' EXIT
echo "commit $(git rev-parse --short HEAD)"
commodel cluster up --spec "$(git rev-parse --show-toplevel)/examples/clusters/two-rack-$P.yaml" --name $N || exit 1
date -u +"%H:%M:%S start"
commodel advise --platform $PLAT --collective allreduce --ranks $P --sizes 1KiB..1MiB \
  --verify full.duckdb --mpirun "commodel cluster mpirun --name $N --" --max-reps 8 \
  --budget 1 --rounds 2 --quiet --use-rules ../refined.rules --plot full-verify.png \
  -o full-verify.txt > full.log 2>&1
echo "full exit $?"
date -u +"%H:%M:%S done"
