#!/bin/bash
# MPICH advised from the platform calibrated under Open MPI 5 (the network is the same):
# whether the MPICH calibration (whose topology rounds timed sends that complete before
# their data is delivered) is what made the MPICH advice miss. The forced and default runs
# of run.sh's databases are reused (copied); only the rules runs are new.
# Usage (root, repository root): bash study/2026-11-28-mpis-two-rack-8/cross.sh OUT
# Another cluster: SPEC=spec.yaml RANKS=<its hosts>, as for run.sh.
set -u
out=${1:?output directory}
root=$(pwd)
cd "$out" || exit 1
name=mp8
trap 'commodel cluster down --name $name >/dev/null 2>&1' EXIT
spec=${SPEC:-$root/examples/clusters/two-rack-8.yaml}; ranks=${RANKS:-8}
commodel cluster up --spec "$spec" --name $name || exit 1
prefix=$root/.mpi/mpich
run="commodel cluster mpirun --name $name --mpirun $prefix/bin/mpiexec --"
for c in ${COLLS:-alltoall allreduce bcast allgather}; do
  date -u +"%H:%M:%S verify mpich $c on the Open MPI 5 platform"
  [ -e verify-mpich-x-$c.duckdb ] || cp verify-mpich-$c.duckdb verify-mpich-x-$c.duckdb
  $prefix/bin/python -m commodel advise --mpi mpich --platform platform-openmpi-5.0.yaml \
    --collective $c --ranks $ranks --sizes 1KiB,8KiB,64KiB,256KiB,1MiB --rules mpich-x-$c.rules \
    --verify verify-mpich-x-$c.duckdb --mpirun "$run" --max-reps ${REPS:-8} --rounds 2 --quiet \
    -o mpich-x-$c-verify.txt >> mpich-x-$c.log 2>&1
  echo "exit $?"
done
date -u +"%H:%M:%S done"
