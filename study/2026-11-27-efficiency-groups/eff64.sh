#!/bin/bash
# Is the 64 KiB exchange loss CPU sharing too? `measure efficiency` at 16, 64 and 256 KiB
# on two-rack-8 with 4 and 8 hosts, every pair at once (the code before this change, a
# worktree of it in $OLD) and in groups (this change), twice each. Into eff64.log.
# Usage (root, the venv active, from this directory): OLD=/path/to/old/python bash eff64.sh
set -u
N=wf64
TOP=$(git rev-parse --show-toplevel)
W=$(mktemp -d)
trap 'commodel cluster down --name $N >/dev/null 2>&1; rm -rf $W' EXIT
commodel cluster up --spec $TOP/examples/clusters/two-rack-8.yaml --name $N > /dev/null || exit 1
run() {  # label, python path, hosts
  echo "== $1"
  PYTHONPATH=$2 commodel cluster mpirun --name $N --hosts $3 -- "$(command -v python3)" -m commodel \
    measure efficiency --db $W/$1.duckdb --sizes 16KiB,64KiB,256KiB --alltoall-sizes 4KiB \
    --fanout-sizes 1KiB --min-reps 10 --max-reps 30 --quiet 2>&1 | grep -v setpgid | sed -n 1,6p
}
for round in 1 2; do
  for h in 4 8; do
    run at-once-n$h-$round "$OLD" $h
    run groups-n$h-$round "$TOP/python" $h
  done
done
