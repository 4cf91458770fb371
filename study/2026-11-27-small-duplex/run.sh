#!/bin/bash
# The duplex loss of small messages: ../2026-11-26-duplex-stream/stream.py at 512 B-4 KiB,
# k = 1, 4, 16 messages per flow, 10 repetitions, on two-rack-8 (quiet machine).
# Usage (root, from this directory, the venv active): bash run.sh
set -u
trap 'commodel cluster down --name sd8 >/dev/null 2>&1' EXIT
commodel cluster up --spec ../../examples/clusters/two-rack-8.yaml --name sd8 || exit 1
commodel cluster mpirun --name sd8 -- "$(command -v python3)" ../2026-11-26-duplex-stream/stream.py \
  512,1KiB,1448,2KiB,4KiB 1,4,16 10 2>&1 | grep -v setpgid | tee stream.log
