#!/bin/bash
# advise --verify --rounds 2 of allreduce 128 KiB..1 MiB on two-rack-16 (token buckets) with
# the platform of ../../2026-11-26-advise-two-rack-16 (calibrated 11:05 UTC), predicted by the
# engine that copies a message's bytes during its transfer (ring at 128 KiB: 1.08x measured)
set -u
trap 'commodel cluster down --name cb16 >/dev/null 2>&1' EXIT
commodel cluster up --spec ../../../examples/clusters/two-rack-16.yaml --name cb16 || exit 1
for c in ${COLLS:-allreduce}; do
  date -u +"%H:%M:%S start $c"
  commodel advise --platform ../../2026-11-26-advise-two-rack-16/platform.yaml --collective $c \
    --ranks 16 --sizes 128KiB..1MiB --rules $c.rules --verify verify-$c.duckdb \
    --mpirun "commodel cluster mpirun --name cb16 --" --max-reps ${REPS:-8} --rounds 2 --quiet \
    --plot $c-verify.png -o $c-verify.txt > $c.log 2>&1
  echo "exit $?"
done
date -u +"%H:%M:%S done"
