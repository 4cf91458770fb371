#!/bin/bash
# advise --verify --rounds 3 (every run in 3 mpiruns) on two-rack-8-serial, the cpu platform
set -u
trap 'commodel cluster down >/dev/null 2>&1' EXIT
commodel cluster up --spec examples/clusters/two-rack-8-serial.yaml || exit 1
for c in ${COLLS:-bcast alltoall allgather allreduce}; do
  date -u +"%H:%M:%S start $c"
  commodel advise --platform platform.yaml --collective $c --ranks 8 --sizes 1KiB..64KiB \
    --rules rr-$c.rules --verify rr-$c.duckdb --mpirun "commodel cluster mpirun --" \
    --max-reps 20 --rounds 3 --quiet --plot rr-$c-verify.png -o rr-$c-verify.txt > rr-$c.log 2>&1
  echo "exit $?"
done
date -u +"%H:%M:%S done"
