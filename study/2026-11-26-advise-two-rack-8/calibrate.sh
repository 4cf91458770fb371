#!/bin/bash
# calibrate two-rack-8 (8 hosts, 100 Mbit/s NICs, 200 Mbit/s uplinks, token buckets) with
# the parts tcpflow uses and the spec's port buffers (calibrate prints them when not given)
set -u
trap 'commodel cluster down --name tr8 >/dev/null 2>&1' EXIT
commodel cluster up --spec ../../examples/clusters/two-rack-8.yaml --name tr8 || exit 1
date -u +"%H:%M:%S calibrate"
commodel cluster mpirun --name tr8 -- "$(command -v python3)" -m commodel calibrate --db cal8.duckdb \
  --parts tcp,plogp,tree,efficiency --buffer 32KiB,32KiB,128KiB -o platform.yaml
echo "exit $?"
date -u +"%H:%M:%S done"
