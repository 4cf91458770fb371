#!/bin/bash
# The target matrix with a repetition budget: as ../2026-11-26-final/run.sh (calibrate,
# then advise --verify --rounds 2 --max-reps 8 at 1 KiB..1 MiB), and --budget 1, so that
# a size whose 95% interval is wider than 2% after 8 samples goes on for a second of
# wall time in each mpirun. two-rack-16: bcast and allreduce (where the last pass missed);
# two-rack-8: all four collectives.
# Usage (root, from this directory, the venv active): bash run.sh
set -u
export BUDGET=${BUDGET:-1}
COLLS="bcast allreduce" OUT=two-rack-16 bash ../2026-11-26-final/run.sh 16 > run-16.log 2>&1
OUT=two-rack-8 bash ../2026-11-26-final/run.sh 8 > run-8.log 2>&1
