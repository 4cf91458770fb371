#!/bin/bash
# Section 5 with the final code (many-to-one at every power of two 1-64 KiB, the refitted
# escalations): calibrate tcp + many-to-one and verify the gather advice, eager limit raised
# to 256 KiB, then Open MPI's default limit
set -x
cd "$(dirname "$0")"  # run from a copy of this directory (it writes its databases here)
. /work/wt/lead/.venv/bin/activate
PY=/work/wt/lead/.venv/bin/python3
E="--mca btl_tcp_eager_limit 262144 --mca btl_tcp_rndv_eager_limit 262144 --mca btl_tcp_max_send_size 262144"
commodel cluster up --spec /work/wt/lead/examples/clusters/two-rack-16.yaml || exit 1
trap 'commodel cluster down' EXIT
for v in 7e 7; do
  if [ $v = 7e ]; then X="$E"; note="Open MPI eager limit 256 KiB"; else X=""; note="default eager limit"; fi
  time commodel cluster mpirun $X -- $PY -m commodel calibrate --parts tcp,many-to-one --quiet --db cal$v.duckdb -o m2o$v.yaml
  $PY splice.py m2o$v.yaml platform$v.yaml "$note"
  time commodel advise --platform platform$v.yaml --collective gather --ranks 16 --sizes 16KiB,32KiB,64KiB \
    --rules gather$v.rules --verify verify16-gather$v.duckdb --mpirun "commodel cluster mpirun $X --" \
    --max-reps 20 --rounds 2 --quiet --plot gather$v-verify.png -o gather$v-verify.txt
done
