#!/bin/bash
# Section 5 with the barrier split: Open MPI's eager limit raised (escalations at 64 KiB), then the default limit
set -x
cd "$(dirname "$0")"  # run from a copy of this directory (it writes its databases here)
. /work/wt/lead/.venv/bin/activate
PY=/work/wt/lead/.venv/bin/python3
E="--mca btl_tcp_eager_limit 262144 --mca btl_tcp_rndv_eager_limit 262144 --mca btl_tcp_max_send_size 262144"
commodel cluster up --spec /work/wt/lead/examples/clusters/two-rack-16.yaml || exit 1
trap 'commodel cluster down' EXIT
time commodel cluster mpirun $E -- $PY -m commodel calibrate --parts tcp,many-to-one --quiet --db cal5e.duckdb -o m2o5e.yaml
$PY splice.py m2o5e.yaml platform5e.yaml "Open MPI eager limit 256 KiB"
time commodel advise --platform platform5e.yaml --collective gather --ranks 16 --sizes 16KiB,32KiB,64KiB \
  --rules gather5e.rules --verify verify16-gather5e.duckdb --mpirun "commodel cluster mpirun $E --" \
  --max-reps 20 --rounds 2 --quiet --plot gather5e-verify.png -o gather5e-verify.txt
time commodel advise --platform /work/wt/lead/study/2026-11-23-gather-split-two-rack-16/platform4.yaml \
  --collective gather --ranks 16 --sizes 16KiB,32KiB \
  --rules gather5.rules --verify verify16-gather5.duckdb --mpirun "commodel cluster mpirun --" \
  --max-reps 20 --rounds 2 --quiet --plot gather5-verify.png -o gather5-verify.txt
