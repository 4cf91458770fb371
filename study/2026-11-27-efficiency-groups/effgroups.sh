#!/bin/bash
# `measure efficiency` at 4 and 16 KiB on two-rack-8, 8 nodes on the machine's cores, with
# the pairs run in groups of at most as many ranks as cores (as measure efficiency now
# does on one machine), twice. Set against ../2026-11-27-wire-fit/effdiag.log (every pair
# at once). Into effgroups.log.
# Usage (root, the venv active, from this directory): bash effgroups.sh
set -u
N=wfg8
TOP=$(git rev-parse --show-toplevel)
W=$(mktemp -d)
trap 'commodel cluster down --name $N >/dev/null 2>&1; rm -rf $W' EXIT
commodel cluster up --spec $TOP/examples/clusters/two-rack-8.yaml --name $N > /dev/null || exit 1
for round in 1 2; do
  echo "== n8-rt-$round"
  commodel cluster mpirun --name $N -- "$(command -v python3)" -m commodel measure efficiency \
    --db $W/$round.duckdb --sizes 4KiB,16KiB --alltoall-sizes 4KiB --fanout-sizes 1KiB \
    --min-reps 10 --max-reps 30 --quiet 2>&1 | grep -v setpgid
done
