#!/bin/bash
# Where linear_sync alltoall (4) loses packets on two-rack-8 and pairwise (2) does not:
# 30 calls per mpirun (../entry.py) at 16-128 KiB, with every port's drops and the hosts' TCP
# counters before and after (counters.py), a line each in runs.jsonl. Three settings:
#   fifo     two-rack-8 as specified (the host NIC's queue is tbf's FIFO)
#   drr      the same with the host NIC serving one queue per destination round robin (qd.sh)
#   port128  two-rack-8 with 128 KiB switch ports toward the hosts (32 KiB in the spec)
# `python3 summary.py > summary.txt`
set -u
PY=$(command -v python3); SPEC=../../../examples/clusters/two-rack-8.yaml
name=
trap 'test -n "$name" && commodel cluster down --name $name >/dev/null 2>&1' EXIT
mkdir -p out
one() {  # setting alg size tag
  local b a
  b=$(python3 counters.py $name)
  commodel cluster mpirun --name $name --mca coll_tuned_use_dynamic_rules 1 \
    --mca coll_tuned_alltoall_algorithm $2 -- $PY ../entry.py alltoall $3 30 \
    > out/$1-a$2-$3-$4.json 2>/dev/null
  sleep 0.5; a=$(python3 counters.py $name)
  echo "{\"setting\": \"$1\", \"alg\": $2, \"size\": $3, \"tag\": \"$4\", \"file\": \"out/$1-a$2-$3-$4.json\", \"before\": $b, \"after\": $a}" >> runs.jsonl
}
name=pq8; commodel cluster up --spec $SPEC --name $name >/dev/null || exit 1
for tag in r1 r2; do
  for setting in fifo drr; do
    ./qd.sh $name $setting
    for size in 16384 32768 65536 131072; do for alg in 4 2; do one $setting $alg $size $tag; done; done
  done
done
commodel cluster down --name $name >/dev/null; name=
sed -e 's/switch_port: 32KiB .*/switch_port: 128KiB/' -e 's/^name: two-rack-8/name: two-rack-8-port128/' \
  $SPEC > two-rack-8-port128.yaml
name=pp8; commodel cluster up --spec two-rack-8-port128.yaml --name $name >/dev/null || exit 1
for tag in r1 r2; do
  for size in 16384 32768 65536 131072; do for alg in 4 2; do one port128 $alg $size $tag; done; done
done
