#!/bin/bash
# calibrate on the dev cluster of seed 2 draw 8 (12 hosts, 20 Mbit/s, racks [10, 2], serialize),
# as root with the machine to itself:  PY=/path/to/venv/bin/python bash exp2.sh
set -u
PY=${PY:-python3}
cd "$(dirname "$0")"
$PY -m commodel cluster up --spec rs2x8.yaml > up2.log 2>&1 || { echo up failed; exit 1; }
trap '$PY -m commodel cluster down --name ct8 >> down.log 2>&1' EXIT
rm -f cal2.duckdb*
s=$(date +%s.%N)
$PY -m commodel cluster mpirun --name ct8 -- $PY -m commodel calibrate --db cal2.duckdb -o cal2.yaml > cal2.log 2>&1
echo "rc $?"
e=$(date +%s.%N); echo "calibrate wall $(echo "$e - $s" | bc) s"
