#!/bin/bash
# the exchange's loss (2i <-> 2i+1) in rounds of k messages per flow (stream.py exchange) on
# two-rack-8, quiet machine
set -u
cd "$(dirname "$0")"
PY=$(command -v python3)
trap 'commodel cluster down --name tr8 >/dev/null 2>&1' EXIT
commodel cluster up --spec ../../examples/clusters/two-rack-8.yaml --name tr8 >/dev/null || exit 1
exec > >(tee stream-exchange.log) 2>&1
date -u +"%H:%M:%S start"
commodel cluster mpirun --name tr8 -- "$PY" stream.py 8KiB,32KiB,128KiB 1,4,16 10 exchange
date -u +"%H:%M:%S done"
