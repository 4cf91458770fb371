#!/bin/bash
# Bring up a cluster from a dev draw's spec, run stall_burst.py on it, take it down:
#   bash stall.sh SPEC NAME [SIZES] [REPS]      (root; from the repository's root)
set -u
SPEC=$1; NAME=$2; SIZES=${3:-16384,32768,65536}; REPS=${4:-4}
PY=${PYTHON:-.venv/bin/python}
HERE=$(cd "$(dirname "$0")" && pwd)
$PY -m commodel cluster up --spec "$SPEC" --name "$NAME" >/dev/null || exit 1
trap '$PY -m commodel cluster down --name "$NAME" >/dev/null' EXIT
$PY -m commodel cluster mpirun --name "$NAME" -- $PY "$HERE/stall_burst.py" "$SIZES" "$REPS"
