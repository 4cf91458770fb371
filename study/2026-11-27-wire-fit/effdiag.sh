#!/bin/bash
# Why e_x(4 KiB) and e_d(4 KiB) are low: `measure efficiency` at 4 and 16 KiB on two-rack-8
# with 8 nodes (ranks real-time, as calibrate runs them), 8 nodes with --no-rt, and 4 and
# 2 nodes (fewer ranks on the machine's 2 cores). Into effdiag.log.
# Usage (root, the venv active, from this directory): bash effdiag.sh
set -u
N=wfe8
TOP=$(git rev-parse --show-toplevel)
W=$(mktemp -d)
trap 'commodel cluster down --name $N >/dev/null 2>&1; rm -rf $W' EXIT
commodel cluster up --spec $TOP/examples/clusters/two-rack-8.yaml --name $N > /dev/null || exit 1
run() {  # label, cluster mpirun options
  local label=$1; shift
  echo "== $label"
  commodel cluster mpirun --name $N "$@" -- "$(command -v python3)" -m commodel measure efficiency \
    --db $W/$label.duckdb --sizes 4KiB,16KiB --alltoall-sizes 4KiB --fanout-sizes 1KiB \
    --min-reps 10 --max-reps 30 --quiet 2>&1 | grep -v setpgid
}
for round in 1 2; do
  run n8-rt-$round
  run n8-nort-$round --no-rt
  run n4-rt-$round --hosts 4
  run n2-rt-$round --hosts 2
done
