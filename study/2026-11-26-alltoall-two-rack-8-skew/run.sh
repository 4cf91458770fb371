#!/bin/bash
# The ranks' entry skew and the stalls of alltoall on two-rack-8 (token buckets), forced
# linear (1) and pairwise (2), 30 repetitions after a warm-up call, at 1, 32 and 64 KiB:
# a$alg-$size.json, then `python3 summary.py a*.json`
set -u
trap 'commodel cluster down --name sk8 >/dev/null 2>&1' EXIT
commodel cluster up --spec ../../examples/clusters/two-rack-8.yaml --name sk8 || exit 1
PY=$(command -v python3)
for alg in 1 2; do for m in 1024 32768 65536; do
  commodel cluster mpirun --name sk8 --mca coll_tuned_use_dynamic_rules 1 \
    --mca coll_tuned_alltoall_algorithm $alg -- $PY entry.py alltoall $m 30 > a$alg-$m.json
done; done
