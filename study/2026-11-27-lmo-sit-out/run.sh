#!/bin/bash
# `measure lmo` on the 8 hosts of two-rack-8 (one rank a host), sizes 0, 8 KiB and 32 KiB,
# 20 roundtrips each; writes LABEL.yaml (the fitted lmo section `measure` prints) and
# LABEL.log. Root, venv active; from this directory: bash run.sh LABEL
set -u
cd "$(dirname "$0")" || exit 1
label=${1:?label}
PY=$(command -v python3)
commodel cluster up --spec ../../examples/clusters/two-rack-8.yaml --name cmlmo >/dev/null || exit 1
trap 'commodel cluster down --name cmlmo >/dev/null' EXIT
rm -f /tmp/lmo-$label.duckdb
commodel cluster mpirun --name cmlmo -- "$PY" -m commodel measure lmo --db /tmp/lmo-$label.duckdb \
  --quiet > $label.yaml 2> $label.log
echo "$label rc=$?"
