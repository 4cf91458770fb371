#!/bin/bash
# More mpiruns at 32 KiB, where run.sh saw linear_sync drop packets with the host NIC's FIFO
# and none served round robin: 5 mpiruns of 30 calls per setting and algorithm, alternating
# fifo and drr (qd.sh), lines appended to runs-32k.jsonl; `python3 summary.py runs-32k.jsonl`
set -u
PY=$(command -v python3); SPEC=../../../examples/clusters/two-rack-8.yaml
name=pk8
trap 'commodel cluster down --name $name >/dev/null 2>&1' EXIT
mkdir -p out
commodel cluster up --spec $SPEC --name $name >/dev/null || exit 1
for tag in k1 k2 k3 k4 k5; do
  for setting in fifo drr; do
    ./qd.sh $name $setting
    for alg in 4 2; do
      b=$(python3 counters.py $name)
      f=out/$setting-a$alg-32768-$tag.json
      commodel cluster mpirun --name $name --mca coll_tuned_use_dynamic_rules 1 \
        --mca coll_tuned_alltoall_algorithm $alg -- $PY ../entry.py alltoall 32768 30 > $f 2>/dev/null
      sleep 0.5; a=$(python3 counters.py $name)
      echo "{\"setting\": \"$setting\", \"alg\": $alg, \"size\": 32768, \"tag\": \"$tag\", \"file\": \"$f\", \"before\": $b, \"after\": $a}" >> runs-32k.jsonl
    done
  done
done
