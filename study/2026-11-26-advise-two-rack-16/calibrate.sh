#!/bin/bash
# calibrate two-rack-16 (16 hosts, 50 Mbit/s NICs, 100 Mbit/s uplinks, token buckets) with
# the parts tcpflow uses and the spec's port buffers (calibrate prints them when not given)
set -u
trap 'commodel cluster down --name tr16 >/dev/null 2>&1' EXIT
commodel cluster up --spec ../../examples/clusters/two-rack-16.yaml --name tr16 || exit 1
date -u +"%H:%M:%S calibrate"
commodel cluster mpirun --name tr16 -- "$(command -v python3)" -m commodel calibrate --db cal16.duckdb \
  --parts tcp,plogp,tree,efficiency --buffer 32KiB,32KiB,32KiB,128KiB -o platform.yaml
echo "exit $?"
date -u +"%H:%M:%S done"
