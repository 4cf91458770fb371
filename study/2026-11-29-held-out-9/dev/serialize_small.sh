#!/bin/bash
# Dev diagnosis: ring allreduce, pipeline bcast and pairwise alltoall at 2 KiB, 300 repetitions each, and
# the serialization daemon's CPU seconds over each run (root; the spec's shaping decides tbf or serialize).
set -u
cd "$(git rev-parse --show-toplevel)"
PY=.venv/bin/python
DB=${DB:-/tmp/serialize-small.duckdb}; rm -f $DB
SPEC=${1:?a cluster spec (the dev draw: study/2026-11-29-held-out-8/test-seed2026112907/rs2026112907x3/spec.yaml, renamed)}; NAME=$(grep '^name:' $SPEC | awk '{print $2}')
$PY -m commodel cluster up --spec $SPEC > /tmp/serialize-small-up.log 2>&1 || { echo up failed; exit 1; }
trap '$PY -m commodel cluster down --name $NAME >/dev/null 2>&1' EXIT
DPID=$($PY -c "
from commodel.cluster.state import read_state
r=read_state('$NAME') or {}; print((r.get('serialize') or {}).get('pid',''))")
echo "daemon pid: $DPID"
cpu() { [ -n "$DPID" ] && awk '{print $14+$15}' /proc/$DPID/stat || echo 0; }
for spec in "allreduce 4" "bcast 5" "alltoall 2"; do
  set -- $spec
  c0=$(cpu); t0=$(date +%s.%N)
  $PY -m commodel measure collective-sweep --db $DB -n 5 --mpirun "$PY -m commodel cluster mpirun --name $NAME --" --collective $1 --sizes 2KiB --algorithms $2 --quiet --min-reps 300 --max-reps 300 > /dev/null 2>&1
  c1=$(cpu); t1=$(date +%s.%N)
  echo "$1 alg $2: wall $(echo "$t1-$t0"|bc) s, daemon cpu $(( (c1-c0) ))/100 s"
done
$PY - <<P
import statistics as st
from commodel.db import ResultsDB
db = ResultsDB("$DB", read_only=True)
for c in db.campaigns():
    v=[r["value_s"] for r in db.samples(c.id) if r["quantity"]=="time"]
    print(c.options.get("collective"), c.options.get("algorithm"), len(v), round(st.median(v)*1e3,3), "ms")
P
