#!/bin/bash
# The target matrix, calibrated afresh, as the final pass ran it (../2026-11-26-final/run.sh):
# two-rack-16 with commit 0fa1bea (efficiencies against tcpflow's own one-way time, no
# bucket; 00:54-02:22 UTC), then two-rack-8 with ca70ec7 (and the token buckets).
# Usage (root, from this directory, the venv active): SIZES="16 8" bash run.sh
set -u
for P in ${SIZES:-8}; do
  OUT=two-rack-$P bash ../2026-11-26-final/run.sh $P > run-$P.log 2>&1
done
