#!/bin/bash
# The target matrix with e_x fitted later against later (72fe636): as
# ../2026-11-27-scaled-bucket/run.sh (calibrate, then advise --verify --rounds 2
# --max-reps 8 --budget 1 at 1 KiB..1 MiB); two-rack-8: all four collectives, then
# two-rack-16: bcast and allreduce (the two that missed on two-rack-16 before).
# Usage (root, from this directory, the venv active): bash run.sh; PARTS=8 or 16: one only
set -u
export BUDGET=${BUDGET:-1}
case ${PARTS:-8 16} in *8*) OUT=two-rack-8 bash ../2026-11-26-final/run.sh 8 > run-8.log 2>&1 ;; esac
case ${PARTS:-8 16} in *16*) COLLS="bcast allreduce" OUT=two-rack-16 bash ../2026-11-26-final/run.sh 16 > run-16.log 2>&1 ;; esac
