#!/bin/bash
# Dev only: the chain part on the racked dev draws, each a fresh cluster from its spec (the
# spec brings the emulated cluster up; neither the measurement nor the fit reads it).
set -u
PY=/work/main/.venv/bin/python
export PYTHONPATH=/work/wt9/python
SRC=/work/dev10/draws; OUT=/work/dev12/draws
for d in $(cat /work/dev12/racked.txt); do
  [ -f $OUT/$d/chain3.done ] && continue
  mkdir -p $OUT/$d
  rm -f $OUT/$d/chain.done
  for f in pattern.duckdb forced.duckdb counters.json measured.json spec.yaml; do ln -sf $SRC/$d/$f $OUT/$d/$f; done
  cp $SRC/$d/cal.duckdb $OUT/$d/cal.duckdb
  name=$(grep '^name:' $SRC/$d/spec.yaml | awk '{print $2}')
  $PY -m commodel cluster down --name $name >/dev/null 2>&1
  if $PY -m commodel cluster up --spec $SRC/$d/spec.yaml > $OUT/$d/up.log 2>&1; then
    timeout 300 $PY -m commodel cluster mpirun --name $name -- $PY -m commodel measure chain --db $OUT/$d/cal.duckdb > $OUT/$d/chain.log 2>&1 && touch $OUT/$d/chain3.done
  fi
  $PY -m commodel cluster down --name $name >/dev/null 2>&1
  echo "$(date -u +%H:%M:%S) $d: $(tail -3 $OUT/$d/chain.log | tr '\n' ' ')"
done
