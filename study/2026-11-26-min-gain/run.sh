#!/bin/bash
# advise --verify --rounds 2 with the margin of 20% below 16 KiB and 5% from it (the new
# default of --min-gain), where it changes the picks on the day's data: alltoall 32 KiB..1 MiB
# and allreduce 16-64 KiB on two-rack-8, allreduce 16-64 KiB on two-rack-16 (token buckets),
# with the platforms of ../2026-11-26-advise-two-rack-{8,16} (calibrated that morning)
set -u
cd "$(dirname "$0")"
exec > >(tee run.log) 2>&1
verify() {  # N COLLECTIVE SIZES
  local n=$1 c=$2 sizes=$3
  name=mg$1
  commodel cluster up --spec ../../examples/clusters/two-rack-$n.yaml --name $name >/dev/null || exit 1
  trap 'commodel cluster down --name $name >/dev/null 2>&1' EXIT
  date -u +"%H:%M:%S start $c, $n ranks, $sizes"
  commodel advise --platform ../2026-11-26-advise-two-rack-$n/platform.yaml --collective $c \
    --ranks $n --sizes $sizes --rules $c-$n.rules --verify verify-$c-$n.duckdb \
    --mpirun "commodel cluster mpirun --name $name --" --max-reps ${REPS:-8} --rounds 2 --quiet \
    --plot $c-$n-verify.png -o $c-$n-verify.txt > $c-$n.log 2>&1
  echo "exit $?"
  commodel cluster down --name $name >/dev/null 2>&1
}
verify 8 alltoall 32KiB..1MiB
verify 8 allreduce 16KiB..64KiB
verify 16 allreduce 16KiB..64KiB
date -u +"%H:%M:%S done"
