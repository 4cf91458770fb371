#!/bin/bash
# measure wire's rings on 3, 4 and 8 hosts of two-rack-8 (one rank a host), 64 B..2 KiB,
# /proc/stat's first line around each; steps.py gives the step times. Root, venv active.
set -u
cd "$(dirname "$0")" || exit 1
C=commodel
TOP=$(git rev-parse --show-toplevel)
$C cluster up --spec $TOP/examples/clusters/two-rack-8.yaml --name cmring >/dev/null || exit 1
trap '$C cluster down --name cmring >/dev/null' EXIT
for h in ${HOSTS:-3 4 8}; do
  head -1 /proc/stat > stat-$h.before
  $C cluster mpirun --name cmring --hosts $h -- "$(command -v python3)" -m commodel measure wire --db ring-$h.duckdb --sizes ${SIZES:-64,256,512,1KiB,2KiB} --reps 3 --quiet 2> ring-$h.log
  rc=$?
  head -1 /proc/stat > stat-$h.after
  echo "hosts $h rc=$rc"
done
