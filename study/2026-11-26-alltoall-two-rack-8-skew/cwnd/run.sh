#!/bin/bash
# The congestion windows of h0's 7 connections while alltoall runs on two-rack-8 (token
# buckets): linear (1) and pairwise (2) forced, 40 repetitions of ../entry.py at 32 and 64 KiB
# (each a fresh mpirun, so fresh connections), `ss -tin` in h0's namespace every 20 ms
# (sample.sh, ss-ALG-SIZE.txt.gz); `python3 parse.py ss-ALG-SIZE.txt` for the summary
set -u
trap 'commodel cluster down --name cw8 >/dev/null 2>&1' EXIT
commodel cluster up --spec ../../../examples/clusters/two-rack-8.yaml --name cw8 || exit 1
PY=$(command -v python3)
for m in 32768 65536; do for alg in 1 2; do
  commodel cluster mpirun --name cw8 --mca coll_tuned_use_dynamic_rules 1 \
    --mca coll_tuned_alltoall_algorithm $alg -- $PY ../entry.py alltoall $m 40 > a$alg-$m.json &
  pid=$!; sleep 0.5; ./sample.sh cm-cw8-h0 $pid ss-$alg-$m.txt; wait $pid
done; done
