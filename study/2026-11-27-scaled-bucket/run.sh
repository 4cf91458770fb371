#!/bin/bash
# The target matrix with the token buckets scaled to their links' rates (8f3f3af) and the
# repetition budget: as ../2026-11-27-budget/run.sh (calibrate, then advise --verify
# --rounds 2 --max-reps 8 --budget 1 at 1 KiB..1 MiB); two-rack-8: all four collectives,
# then two-rack-16: bcast and allreduce.
# Usage (root, from this directory, the venv active): bash run.sh
set -u
export BUDGET=${BUDGET:-1}
OUT=two-rack-8 bash ../2026-11-26-final/run.sh 8 > run-8.log 2>&1
COLLS="bcast allreduce" OUT=two-rack-16 bash ../2026-11-26-final/run.sh 16 > run-16.log 2>&1
