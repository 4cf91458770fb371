#!/bin/bash
# txbytes.py on two-rack-8, one rank per host (root, the venv active, from this directory).
set -u
trap 'commodel cluster down --name wb8 >/dev/null 2>&1' EXIT
commodel cluster up --spec ../../examples/clusters/two-rack-8.yaml --name wb8 || exit 1
commodel cluster mpirun --name wb8 -- "$(command -v python3)" txbytes.py cm-data \
  256,512,1KiB,1400,2KiB,4KiB,16KiB,32KiB 2>&1 | grep -v setpgid | tee txbytes.log
