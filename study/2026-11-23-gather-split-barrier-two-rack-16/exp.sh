#!/bin/bash
set -x
cd "$(dirname "$0")"  # run from a copy of this directory (it writes its databases here)
. /work/wt/lead/.venv/bin/activate
PY=/work/wt/lead/.venv/bin/python3
commodel cluster up --spec /work/wt/lead/examples/clusters/two-rack-16.yaml || exit 1
trap 'commodel cluster down' EXIT
L="--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_gather_algorithm 1"
E="--mca btl_tcp_eager_limit 262144 --mca btl_tcp_rndv_eager_limit 262144 --mca btl_tcp_max_send_size 262144"
commodel cluster mpirun $L $E -- $PY split.py 64,16 1,4,16 b2b,barrier 20 eager-linear
commodel cluster mpirun $L -- $PY split.py 16,32,64 1,4,16 b2b,barrier 20 default-linear
for a in 2 3; do
commodel cluster mpirun --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_gather_algorithm $a $E -- $PY split.py 16,64 1 b2b 20 eager-alg$a
done
