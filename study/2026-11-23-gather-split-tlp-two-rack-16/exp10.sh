#!/bin/bash
# Why do 4 KiB sub-gathers escalate more than 8 KiB ones? TCP loss-recovery counters over
# the hosts around a 32 KiB gather (basic_linear forced) split into k = 1, 4, 8, 16.
set -u

PY=$(command -v python3)
SPEC=${SPEC:-examples/clusters/two-rack-16.yaml}
trap 'commodel cluster down >/dev/null 2>&1' EXIT
commodel cluster up --spec $SPEC || exit 1
STATE=$(ls /run/commodel/*.json | head -1)
SIZE=${SIZE:-32768}
for round in ${ROUNDS:-1 2}; do
for k in ${KS:-1 4 8 16}; do
  db=exp10${TAG:-}-$SIZE-k$k-r$round.duckdb; rm -f $db
  split=(); [ $k -gt 1 ] && split=(--splits $k)
  before=$(python3 tcpcount.py $STATE)
  commodel cluster mpirun --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_gather_algorithm 1 -- \
    $PY -m commodel measure collective --collective gather --db $db --sizes $SIZE "${split[@]}" \
    --min-reps 20 --max-reps 20 --quiet > exp10${TAG:-}-$SIZE-k$k-r$round.log 2>&1
  rc=$?
  after=$(python3 tcpcount.py $STATE)
  echo "{\"k\": $k, \"size\": $SIZE, \"round\": $round, \"rc\": $rc, \"db\": \"$db\", \"before\": $before, \"after\": $after}" >> exp10.jsonl
done
done
