#!/bin/bash
# advise --verify --rounds 3 of alltoall on two-rack-16-serial, 1-64 KiB, tcpflow with tail drops
set -u
trap 'commodel cluster down >/dev/null 2>&1' EXIT
commodel cluster up --spec ../../examples/clusters/two-rack-16-serial.yaml || exit 1
for c in ${COLLS:-alltoall}; do
  date -u +"%H:%M:%S start $c"
  commodel advise --platform platform.yaml --collective $c --ranks 16 --sizes 1KiB..64KiB \
    --rules $c.rules --verify verify-$c.duckdb --mpirun "commodel cluster mpirun --" \
    --max-reps 10 --rounds 3 --quiet --plot $c-verify.png -o $c-verify.txt > $c.log 2>&1
  echo "exit $?"
done
date -u +"%H:%M:%S done"
