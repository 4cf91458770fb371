#!/bin/bash
# The dev experiment of this folder, on dev cluster rs2026112802x2 (8 hosts, 58 Mbit/s tbf;
# its spec from the held-out round of seed 2026112802): measure efficiency on 8, 3 and 4
# hosts (64 and 256 KiB), then the GOAL rounds of data/ with measure pattern.
#   bash measure.sh SPEC OUT
set -u
SPEC=$1; OUT=$2; HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"; cd "$OUT"
C="commodel"; PY=$(command -v python3)
$C cluster up --spec "$SPEC" --name race > up.log 2>&1 || { echo "cluster up failed (up.log)"; exit 1; }
trap '$C cluster down --name race >> up.log 2>&1' EXIT
for n in 8 3 4 8 3; do
  $C cluster mpirun --name race --hosts $n -- $PY -m commodel measure efficiency --db eff-$n.duckdb \
    --sizes 65536,262144 --alltoall-sizes 4096 --fanout-sizes 1024 --min-reps 8 --max-reps 8 --quiet > eff-$n.log 2>&1
done
for g in chain ring3 ring3r ring8 ring8r exch1 exch8 oneway8; do
  $C cluster mpirun --name race -- $PY -m commodel measure pattern --db pat.duckdb --max-reps 12 --quiet "$HERE/data/$g.goal" > pat-$g.log 2>&1
done
