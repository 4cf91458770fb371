# One full calibrate with each of two checkouts' Pythons on one emulated cluster, one after
# the other (root; run under the machine lock). Usage:
#   SPEC=spec.yaml BEFORE=/path/a/.venv/bin/python AFTER=/path/b/.venv/bin/python bash calibrate_ab.sh
# Prints each run's wall time; the databases are /tmp/cab-before.duckdb and /tmp/cab-after.duckdb
# (python overhead.py DIR reads DIR/cal.duckdb: copy them into two folders).
set -u
N=cmab
trap '"$AFTER" -m commodel cluster down --name $N >/dev/null 2>&1 || true' EXIT
"$AFTER" -m commodel cluster up --spec "$SPEC" --name $N >/dev/null
for which in before after; do
  if [ $which = before ]; then py=$BEFORE; else py=$AFTER; fi
  rm -f /tmp/cab-$which.duckdb*
  s=$(date +%s.%N)
  "$AFTER" -m commodel cluster mpirun --name $N -- "$py" -m commodel calibrate \
    --db /tmp/cab-$which.duckdb --quiet -o /tmp/cab-$which.yaml >/tmp/cab-$which.out 2>&1
  rc=$?
  e=$(date +%s.%N)
  echo "$which $(echo "$e - $s" | bc) s rc=$rc"
done
