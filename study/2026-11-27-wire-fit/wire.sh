#!/bin/bash
# `commodel measure wire` on two-rack-P, one rank per host (root, the venv active, from
# this directory): the counts and the h, a that fit writes from them, into wire-P.log.
# Usage: bash wire.sh 8; bash wire.sh 16
set -u
P=${1:?usage: wire.sh 8|16}
N=wf$P
TOP=$(git rev-parse --show-toplevel)
trap 'commodel cluster down --name $N >/dev/null 2>&1' EXIT
commodel cluster up --spec $TOP/examples/clusters/two-rack-$P.yaml --name $N || exit 1
rm -f wire-$P.duckdb
commodel cluster mpirun --name $N -- "$(command -v python3)" -m commodel measure wire \
  --db wire-$P.duckdb --quiet 2>&1 | grep -v setpgid | tee wire-$P.log
