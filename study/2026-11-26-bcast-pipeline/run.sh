#!/bin/bash
# Pipeline bcast (3, 8 KiB segments) and scatter_allgather_ring (9) of 128 KiB on 16 ranks,
# 20 calls per mpirun with every rank's entry and exit (../2026-11-26-alltoall-two-rack-8-skew/
# entry.py): on two-rack-16 (token buckets; and ring allreduce, tbf-r4), then on
# two-rack-16-serial quiet, beside four spinning processes of ours (killed by their PIDs),
# quiet again. `python3 summary.py *.json`; predictions: commodel schedule bcast-pipeline -P 16
# -m 128KiB -o pipe16.goal; commodel predict pipe16.goal --platform
# ../2026-11-23-advise-two-rack-16-serial-cpu/platform.yaml
set -u
E=../2026-11-26-alltoall-two-rack-8-skew/entry.py
PY=$(command -v python3)
trap 'commodel cluster down --name bp16 >/dev/null 2>&1' EXIT
run() {  # output algorithm [collective]
  local c=${3:-bcast}
  commodel cluster mpirun --name bp16 --mca coll_tuned_use_dynamic_rules 1 \
    --mca coll_tuned_${c}_algorithm $2 --mca coll_tuned_bcast_algorithm_segmentsize 8192 -- \
    $PY $E $c 131072 20 > $1.json
}
commodel cluster up --spec ../../examples/clusters/two-rack-16.yaml --name bp16 || exit 1
run tbf-b3 3; run tbf-r4 4 allreduce
commodel cluster down --name bp16
commodel cluster up --spec ../../examples/clusters/two-rack-16-serial.yaml --name bp16 || exit 1
run serial-b3 3; run serial-b9 9; run serial-b3-quiet 3; run serial-b9-quiet 9
for i in 1 2 3 4; do python3 -c "while True: pass" & s[$i]=$!; done
run serial-b3-busy 3; run serial-b9-busy 9
kill ${s[@]}; wait ${s[@]} 2>/dev/null
run serial-b3-quiet2 3
