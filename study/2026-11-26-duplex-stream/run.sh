#!/bin/bash
# duplex loss: rate or delay per round? (stream.py) on two-rack-8, quiet machine
set -u
cd "$(dirname "$0")"
PY=$(command -v python3)
trap 'commodel cluster down --name tr8 >/dev/null 2>&1' EXIT
commodel cluster up --spec ../../examples/clusters/two-rack-8.yaml --name tr8 || exit 1
exec > >(tee stream.log) 2>&1
date -u +"%H:%M:%S start"
commodel cluster mpirun --name tr8 -- "$PY" stream.py 4KiB,8KiB,16KiB,32KiB,128KiB 1,4,16 10
date -u +"%H:%M:%S done"
