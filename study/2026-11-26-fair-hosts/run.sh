#!/bin/bash
# The target matrix of ../2026-11-26-final on hosts whose NICs serve each destination in turn
# (host_queue: fair, as a Debian host's fq_codel): that directory's run.sh on
# two-rack-P-fair.yaml, writing into two-rack-P-fair/ here.
# Usage (root, from this directory, the venv active): bash run.sh 8; bash run.sh 16
exec bash ../2026-11-26-final/run.sh "${1:?usage: run.sh 8|16}" -fair
