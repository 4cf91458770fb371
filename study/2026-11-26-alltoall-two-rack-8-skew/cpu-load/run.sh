#!/bin/bash
# linear alltoall (1) at 32 KiB on two-rack-8, 40 calls per mpirun (../entry.py): two mpiruns on
# a quiet machine, two beside two spinning processes of ours (normal priority, killed by
# their PIDs), one quiet again; `python3 summary.py`
set -u
trap 'commodel cluster down --name dz8 >/dev/null 2>&1' EXIT
commodel cluster up --spec ../../../examples/clusters/two-rack-8.yaml --name dz8 || exit 1
PY=$(command -v python3)
run() {
  commodel cluster mpirun --name dz8 --mca coll_tuned_use_dynamic_rules 1 \
    --mca coll_tuned_alltoall_algorithm 1 -- $PY ../entry.py alltoall 32768 40 > $1.json
}
run quiet1; run quiet2
python3 -c "while True: pass" & s1=$!
python3 -c "while True: pass" & s2=$!
run busy1; run busy2
kill $s1 $s2; wait $s1 $s2 2>/dev/null
run quiet3
