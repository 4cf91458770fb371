#!/bin/bash
# The allreduce rules run.sh refined on two-rack-P (two-rack-P/refined.rules, unchanged)
# verified afresh at 1-16 KiB in 6 rounds, where two rounds of again.sh did not settle
# the sizes, into two-rack-P/again6/. Usage (root, from this directory, the venv active):
# bash again6.sh 16
set -u
P=${1:?usage: again6.sh 8|16}
N=r6$P
PLAT=../../2026-11-27-margin/two-rack-$P/platform.yaml
mkdir -p two-rack-$P/again6 && cd two-rack-$P/again6 || exit 1
trap 'commodel cluster down --name $N >/dev/null 2>&1' EXIT
echo "commit $(git rev-parse --short HEAD)"
commodel cluster up --spec "$(git rev-parse --show-toplevel)/examples/clusters/two-rack-$P.yaml" --name $N || exit 1
date -u +"%H:%M:%S start"
commodel advise --platform $PLAT --collective allreduce --ranks $P --sizes 1KiB..16KiB \
  --verify small.duckdb --mpirun "commodel cluster mpirun --name $N --" --max-reps 8 \
  --budget 1 --rounds 6 --quiet --use-rules ../refined.rules -o small-verify.txt > small.log 2>&1
echo "small exit $?"
date -u +"%H:%M:%S done"
