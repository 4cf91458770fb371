#!/bin/bash
# Open MPI's basic_linear gather at 64 KiB, 16 ranks: default eager limit against a raised one
set -x
cd /tmp/lead/s16
. /work/wt/lead/.venv/bin/activate
PY=/work/wt/lead/.venv/bin/python3
commodel cluster up --spec /work/wt/lead/examples/clusters/two-rack-16.yaml || exit 1
trap 'commodel cluster down' EXIT
F="--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_gather_algorithm 1"
E="--mca btl_tcp_eager_limit 262144 --mca btl_tcp_rndv_eager_limit 262144 --mca btl_tcp_max_send_size 262144"
for r in 1 2; do
  commodel cluster mpirun $F $E -- $PY -m commodel measure collective --quiet --db eager.duckdb --collective gather --sizes 32KiB,64KiB,128KiB --min-reps 20 --max-reps 20 --round $r
  commodel cluster mpirun $F -- $PY -m commodel measure collective --quiet --db noeager.duckdb --collective gather --sizes 32KiB,64KiB,128KiB --min-reps 20 --max-reps 20 --round $r
done
