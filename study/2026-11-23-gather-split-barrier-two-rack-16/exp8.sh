#!/bin/bash
# Why 4 KiB sub-gathers escalate in the split but not in the many-to-one benchmark: idle ports
set -x
cd "$(dirname "$0")"
. /work/wt/lead/.venv/bin/activate
PY=/work/wt/lead/.venv/bin/python3
commodel cluster up --spec /work/wt/lead/examples/clusters/two-rack-16.yaml || exit 1
trap 'commodel cluster down' EXIT
L="--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_gather_algorithm 1"
commodel cluster mpirun $L -- $PY split.py 16,32 4,8 barrier,idle 20 default-linear
