#!/bin/bash
# many-to-one (posted Irecvs) against Open MPI's basic_linear gather (sequential recvs), n=16
set -x
cd /tmp/lead/s16
. /work/wt/lead/.venv/bin/activate
commodel cluster up --spec /work/wt/lead/examples/clusters/two-rack-16.yaml || exit 1
trap 'commodel cluster down' EXIT
for r in 1 2; do
  commodel cluster mpirun -- /work/wt/lead/.venv/bin/python3 -m commodel measure many-to-one --quiet --db m2o.duckdb --n 16 --sizes 16KiB,64KiB --reps 20
  commodel cluster mpirun --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_gather_algorithm 1 -- /work/wt/lead/.venv/bin/python3 -m commodel measure collective --quiet --db g.duckdb --collective gather --sizes 16KiB,64KiB --min-reps 20 --max-reps 20 --round $r
done
