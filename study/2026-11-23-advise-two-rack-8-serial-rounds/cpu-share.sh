#!/bin/bash
set -u

PY=$(command -v python3)
trap 'commodel cluster down >/dev/null 2>&1' EXIT
commodel cluster up --spec examples/clusters/two-rack-8-serial.yaml >/dev/null || exit 1
export WIRE_PID=$(python3 -c "import json;print(json.load(open('/run/commodel/tworack8serial.json'))['wire']['pid'])")
for alg in ${ALGS:-2 6 9}; do  # chain, binomial, scatter_allgather_ring
  for m in ${SIZES:-1024 4096}; do
    echo -n "alg $alg: "
    commodel cluster mpirun --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_bcast_algorithm $alg ${EXTRA:-} -x WIRE_PID -- $PY cpu-spin.py $m 300
  done
done
