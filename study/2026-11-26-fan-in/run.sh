#!/bin/bash
# The target matrix of ../2026-11-26-final with the fan-in table (tcp.efficiency.fanin,
# fitted from measure efficiency's all-to-all rounds): that directory's run.sh, writing
# into two-rack-P/ here. COLLS=alltoall bash run.sh 8 runs one collective.
# Usage (root, from this directory, the venv active): bash run.sh 8; bash run.sh 16
exec bash ../2026-11-26-final/run.sh "${1:?usage: run.sh 8|16}"
