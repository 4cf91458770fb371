#!/bin/bash
# Dev only: the chain part on the racked dev draws, each a fresh cluster from its spec (the
# spec brings the emulated cluster up; neither the measurement nor the fit reads it).
#   SRC=DRAWS OUT=DIR LIST=FILE [PY=python] bash chain_dev.sh    (root)
# DRAWS: the rebuilt dev draws (../../2026-11-29-held-out-9/dev/rebuild.py); LIST: the names
# of those whose refit found racks, one a line; OUT/<draw>/ gets the draw's databases linked,
# a copy of its cal.duckdb with a chain campaign added, then `exp.py OUT RESULT` scores it.
set -u
PY=${PY:-python3}
SRC=${SRC:?the rebuilt dev draws}; OUT=${OUT:?an output directory}; LIST=${LIST:?a file of draw names}
for d in $(cat "$LIST"); do
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
