#!/bin/bash
# One calibration on an emulated cluster, timed: bash calibrate.sh SPEC CODE_PYTHONPATH OUT
# (commodel on PATH, root; the cluster is torn down on every exit)
set -u
SPEC=$1; CODE=$2; OUT=$3; NAME=caltime
mkdir -p "$OUT"
PY=$(command -v python3)
commodel cluster up --spec "$SPEC" --name $NAME > "$OUT/up.log" 2>&1 || { echo "up failed ($OUT/up.log)"; exit 1; }
trap 'commodel cluster down --name $NAME >> "$OUT/up.log" 2>&1' EXIT
start=$(date +%s)
PYTHONPATH=$CODE commodel cluster mpirun --name $NAME -x PYTHONPATH -- "$PY" -m commodel calibrate \
  --db "$OUT/cal.duckdb" -o "$OUT/platform.yaml" > "$OUT/cal.log" 2>&1
echo "rc $? elapsed $(( $(date +%s) - start )) s"
