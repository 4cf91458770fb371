#!/bin/bash
# Section 5 again: tcp + many-to-one calibrated (min_excess = RTO_min / 4), then advise gather --verify
set -x
cd /tmp/lead/s16
. /work/wt/lead/.venv/bin/activate
PY=/work/wt/lead/.venv/bin/python3
commodel cluster up --spec /work/wt/lead/examples/clusters/two-rack-16.yaml || exit 1
trap 'commodel cluster down' EXIT
time commodel cluster mpirun -- $PY -m commodel calibrate --parts tcp,many-to-one --quiet --db cal4.duckdb -o m2o4.yaml
$PY splice.py m2o4.yaml platform4.yaml
time commodel advise --platform platform4.yaml --collective gather --ranks 16 --sizes 16KiB,32KiB,64KiB \
  --rules gather4.rules --verify verify16-gather4.duckdb --mpirun "commodel cluster mpirun --" \
  --max-reps 20 --rounds 2 --quiet --plot gather4-verify.png -o gather4-verify.txt
