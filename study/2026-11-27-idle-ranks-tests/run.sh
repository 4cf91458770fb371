#!/bin/bash
# PLogP on two-rack-16 with Open MPI's progress engine polling its sockets by poll() (its
# default, opal_event_include=poll) or by epoll: `calibrate --parts plogp` under
# `cluster mpirun -n 16` with poll, -n 16 with epoll and -n 2 with epoll, in turn, ROUNDS
# times, on one cluster (-n 2 with poll: ../2026-11-27-idle-ranks; the runs with the
# backing-off barrier: README.md). Ranks 0 and 1 (h0, h1) measure in all.
# Usage (root, from this directory, the venv active): [ROUNDS=2] bash run.sh
set -u
N=idlet16
TOP=$(git rev-parse --show-toplevel)
trap 'commodel cluster down --name $N >/dev/null 2>&1' EXIT
commodel cluster up --spec $TOP/examples/clusters/two-rack-16.yaml --name $N || exit 1
for r in $(seq 1 ${ROUNDS:-2}); do
  for run in n16-poll n16-epoll n2-epoll; do
    n=${run%%-*}; n=${n#n}; how=${run#*-}
    date -u +"%H:%M:%S $run round $r"
    commodel cluster mpirun --name $N -n $n --mca opal_event_include $how -- \
      "$(command -v python3)" -m commodel calibrate --db $run-$r.duckdb --parts plogp \
      -o platform-$run-$r.yaml > calibrate-$run-$r.log 2>&1
    echo "exit $?"
  done
done
date -u +"%H:%M:%S done"
