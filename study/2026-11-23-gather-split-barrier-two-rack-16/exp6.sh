#!/bin/bash
# Section 5 verified with the final advice (escalation-aware predictions, floor in tcpflow):
# the platform of exp5 (many-to-one calibrated with the eager limit at 256 KiB), then the
# 2026-11-23 platform (default eager limit)
set -x
cd "$(dirname "$0")"  # run from a copy of this directory (it writes its databases here)
. /work/wt/lead/.venv/bin/activate
E="--mca btl_tcp_eager_limit 262144 --mca btl_tcp_rndv_eager_limit 262144 --mca btl_tcp_max_send_size 262144"
commodel cluster up --spec /work/wt/lead/examples/clusters/two-rack-16.yaml || exit 1
trap 'commodel cluster down' EXIT
time commodel advise --platform platform5e.yaml --collective gather --ranks 16 --sizes 16KiB,32KiB,64KiB \
  --rules gather6e.rules --verify verify16-gather6e.duckdb --mpirun "commodel cluster mpirun $E --" \
  --max-reps 20 --rounds 2 --quiet --plot gather6e-verify.png -o gather6e-verify.txt
time commodel advise --platform /work/wt/lead/study/2026-11-23-gather-split-two-rack-16/platform4.yaml \
  --collective gather --ranks 16 --sizes 16KiB,32KiB \
  --rules gather6.rules --verify verify16-gather6.duckdb --mpirun "commodel cluster mpirun --" \
  --max-reps 20 --rounds 2 --quiet --plot gather6-verify.png -o gather6-verify.txt
