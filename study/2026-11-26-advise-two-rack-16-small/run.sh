#!/bin/bash
# advise --verify --rounds 2 on two-rack-16 (token buckets) at 1-64 KiB for bcast, allgather and
# allreduce, with the platform of ../2026-11-26-advise-two-rack-16 (a copy: platform.yaml), calibrated at 11:05 UTC (with
# --buffer), predicted by the engine with the bytes' copies during the transfer
set -u
trap 'commodel cluster down --name ts16 >/dev/null 2>&1' EXIT
commodel cluster up --spec ../../examples/clusters/two-rack-16.yaml --name ts16 || exit 1
for c in ${COLLS:-bcast allgather allreduce}; do
  date -u +"%H:%M:%S start $c"
  commodel advise --platform platform.yaml --collective $c \
    --ranks 16 --sizes 1KiB..64KiB --rules $c.rules --verify verify-$c.duckdb \
    --mpirun "commodel cluster mpirun --name ts16 --" --max-reps ${REPS:-8} --rounds 2 --quiet \
    --plot $c-verify.png -o $c-verify.txt > $c.log 2>&1
  echo "exit $?"
done
date -u +"%H:%M:%S done"
