#!/bin/bash
# The target matrix on two-rack-16 with PLogP's idle ranks sitting out (4e316bf): as
# ../2026-11-26-final/run.sh 16 (calibrate, then advise --verify --rounds 2 --max-reps 8
# --budget 1 at 1 KiB..1 MiB), all four collectives, into two-rack-16/.
# Usage (root, from this directory, the venv active): bash pass.sh
set -u
export BUDGET=${BUDGET:-1}
OUT=two-rack-16 bash ../2026-11-26-final/run.sh 16 > run-16.log 2>&1
