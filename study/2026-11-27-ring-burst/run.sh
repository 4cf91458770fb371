#!/bin/bash
# Open MPI's ring (4) and rabenseifner (6) allreduce at 1, 8 and 16 KiB on two-rack-8 with
# the shapers' bursts of rate x 250 us (the emulator's) and x 2.5 ms (ten times), in turn,
# ROUNDS times, a fresh cluster each. The burst comes from BURST_S in a copy of the tree's
# python/commodel with burst.patch applied (the patch is not in the tree).
# Usage (root, from this directory, the venv active): [ROUNDS=2] bash run.sh
set -u
TOP=$(git rev-parse --show-toplevel)
COPY=$(mktemp -d)
N=rb8
trap 'commodel cluster down --name $N >/dev/null 2>&1; rm -rf "$COPY"' EXIT
(cd "$TOP" && git archive HEAD python/commodel) | tar -x -C "$COPY"
cp "$TOP"/python/commodel/_engine*.so "$COPY"/python/commodel/
patch -s -d "$COPY" -p1 < burst.patch || exit 1
export PYTHONPATH=$COPY/python
for r in $(seq 1 ${ROUNDS:-2}); do
  for b in 250e-6 2.5e-3; do
    export BURST_S=$b
    commodel cluster up --spec "$TOP"/examples/clusters/two-rack-8.yaml --name $N >/dev/null || exit 1
    for alg in 4 6; do
      commodel cluster mpirun --name $N --mca coll_tuned_use_dynamic_rules 1 \
        --mca coll_tuned_allreduce_algorithm $alg -- "$(command -v python3)" -m commodel \
        measure collective --collective allreduce --sizes 1024,8192,16384 \
        --db round$r-burst$b-alg$alg.duckdb --max-reps 60 --quiet 2>&1 \
        | grep KiB | sed "s/^/round $r burst $b s alg $alg: /"
    done
    commodel cluster down --name $N >/dev/null
  done
done
