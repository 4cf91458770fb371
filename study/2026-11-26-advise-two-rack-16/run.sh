#!/bin/bash
# advise --verify --rounds 2 on two-rack-16 (token buckets) with the platform calibrate.sh
# wrote (tcpflow with tail drops at full ports): alltoall 1 KiB..1 MiB, then the other
# collectives at 128 KiB..1 MiB (below that, the serializing spec is the ground truth)
set -u
trap 'commodel cluster down --name tr16 >/dev/null 2>&1' EXIT
commodel cluster up --spec ../../examples/clusters/two-rack-16.yaml --name tr16 || exit 1
verify() {  # collective sizes
  date -u +"%H:%M:%S start $1 $2"
  commodel advise --platform platform.yaml --collective $1 --ranks 16 --sizes $2 \
    --rules $1.rules --verify verify-$1.duckdb --mpirun "commodel cluster mpirun --name tr16 --" \
    --max-reps ${REPS:-8} --rounds 2 --quiet --plot $1-verify.png -o $1-verify.txt > $1.log 2>&1
  echo "exit $?"
}
for c in ${COLLS:-alltoall bcast allgather allreduce}; do
  if [ $c = alltoall ]; then verify $c 1KiB..1MiB; else verify $c 128KiB..1MiB; fi
done
date -u +"%H:%M:%S done"
