#!/bin/bash
# advise --verify --rounds 2 of bcast at 64 and 128 KiB on two-rack-8 and two-rack-16 (token
# buckets) with the platforms of ../../2026-11-26-advise-two-rack-{8,16} (calibrated that
# day), predicted with the duplex loss as a delay (pipeline bcast: 1.00x measured at 1 MiB)
set -u
cd "$(dirname "$0")"
exec > >(tee run.log) 2>&1
for n in 8 16; do
  name=ds$n
  trap 'commodel cluster down --name $name >/dev/null 2>&1' EXIT
  commodel cluster up --spec ../../../examples/clusters/two-rack-$n.yaml --name $name >/dev/null || exit 1
  date -u +"%H:%M:%S start bcast, $n ranks"
  commodel advise --platform ../../2026-11-26-advise-two-rack-$n/platform.yaml --collective bcast \
    --ranks $n --sizes 64KiB..128KiB --rules bcast-$n.rules --verify verify-bcast-$n.duckdb \
    --mpirun "commodel cluster mpirun --name $name --" --max-reps ${REPS:-8} --rounds 2 --quiet \
    --plot bcast-$n-verify.png -o bcast-$n-verify.txt > bcast-$n.log 2>&1
  echo "exit $?"
  commodel cluster down --name $name >/dev/null 2>&1
done
date -u +"%H:%M:%S done"
