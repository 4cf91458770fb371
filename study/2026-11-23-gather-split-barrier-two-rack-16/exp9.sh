#!/bin/bash
# exp7's default-eager verification again with Ms from every n <= P (k = 8 and 16 instead of 4
# and 8): the same database, so only the new split runs are measured
set -x
cd "$(dirname "$0")"
. /work/wt/lead/.venv/bin/activate
commodel cluster up --spec /work/wt/lead/examples/clusters/two-rack-16.yaml || exit 1
trap 'commodel cluster down' EXIT
cp gather7-verify.txt gather7-verify-k4.txt
time commodel advise --platform platform7.yaml --collective gather --ranks 16 --sizes 16KiB,32KiB,64KiB \
  --rules gather7.rules --verify verify16-gather7.duckdb --mpirun "commodel cluster mpirun --" \
  --max-reps 20 --rounds 2 --quiet --plot gather7-verify.png -o gather7-verify.txt
