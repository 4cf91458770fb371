#!/bin/bash
# `measure many-to-one` on the 8 hosts of two-rack-8 (one rank a host), n = 3, 5 and 8
# processes involved, M = 1 KiB, 16 KiB and 64 KiB, 30 repetitions; writes LABEL.txt (the
# summary `measure` prints) and LABEL.duckdb's samples as LABEL.csv. Root, venv active;
# from this directory: bash run.sh LABEL. HOSTS=3 NS=3 runs 3 ranks only (no rank idles).
set -u
cd "$(dirname "$0")" || exit 1
label=${1:?label}
PY=$(command -v python3)
commodel cluster up --spec ../../examples/clusters/two-rack-8.yaml --name cmm2o >/dev/null || exit 1
trap 'commodel cluster down --name cmm2o >/dev/null' EXIT
rm -f /tmp/m2o-$label.duckdb
commodel cluster mpirun --name cmm2o --hosts ${HOSTS:-8} -- "$PY" -m commodel measure many-to-one \
  --db /tmp/m2o-$label.duckdb --n ${NS:-3,5,8} --sizes 1KiB,16KiB,64KiB --reps 30 --quiet \
  > $label.txt 2>&1
echo "$label rc=$?"
"$PY" - /tmp/m2o-$label.duckdb $label.csv <<'PYEOF'
import sys
import duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
con.execute(f"COPY (SELECT n_ranks, size_bytes, repetition, value_s FROM samples ORDER BY n_ranks, size_bytes, repetition) TO '{sys.argv[2]}' (HEADER)")
PYEOF
