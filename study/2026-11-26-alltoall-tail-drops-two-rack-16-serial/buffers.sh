#!/bin/bash
# The backbone port's buffer decides: linear alltoall (forced) and pairwise at 2-8 KiB on
# two-rack-16-serial with 64 KiB and 256 KiB backbone ports (the spec has 128 KiB): drops
# per port and TCP counters around each mpirun of 20 repetitions (drops.sh), then the
# predictions of tcpflow with the same buffers (predict.py).
set -u
for bb in 64 256; do
  name=bb$bb
  trap "commodel cluster down --name $name >/dev/null 2>&1" EXIT
  commodel cluster up --spec two-rack-16-serial-bb$bb.yaml --name $name || exit 1
  NAME=$name SIZES="${SIZES:-2KiB 4KiB 8KiB}" ./drops.sh
  commodel cluster down --name $name
done
