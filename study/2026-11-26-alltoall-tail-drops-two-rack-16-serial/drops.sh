#!/bin/bash
# alltoall forced linear (1) and pairwise (2) on the running cluster $NAME: drops per port and
# TCP loss-recovery counters around each mpirun of 20 repetitions at one size, a line each in
# $NAME.jsonl (the 128 KiB run was named a2a: bb128.jsonl); `python3 summary.py NAME.jsonl`
# reads them with the samples (the DuckDB files, not kept here) into NAME-summary.txt
set -u
NAME=${NAME:-a2a}; PY=$(command -v python3)
for size in ${SIZES:-2KiB 4KiB 8KiB 16KiB}; do
for alg in ${ALGS:-1 2}; do
  db=a2a-$NAME-$alg-$size.duckdb; rm -f $db
  sleep 1.2; before=$(python3 counters.py $NAME)
  commodel cluster mpirun --name $NAME --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_alltoall_algorithm $alg -- \
    $PY -m commodel measure collective --collective alltoall --db $db --sizes $size \
    --min-reps 20 --max-reps 20 --quiet > $db.log 2>&1
  rc=$?
  sleep 1.2; after=$(python3 counters.py $NAME)
  echo "{\"alg\": $alg, \"size\": \"$size\", \"rc\": $rc, \"db\": \"$db\", \"before\": $before, \"after\": $after}" >> $NAME.jsonl
done; done
