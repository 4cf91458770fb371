#!/bin/bash
# Issue 39, item 4 for Intel MPI: calibrate, advise --mpi intel-mpi and advise --verify under
# Intel MPI 2021.18.1 (impi-rt, `make mpis`) on the emulated two-rack-8, one rank per host:
# the previous study's run.sh with `intel-mpi`, one collective per hold of the machine lock
# (the platform is calibrated in the first and kept). Waits while /tmp/commodel-pause exists
# and stops a collective's run when it appears (the same command resumes it). COLLS="bcast+allgather"
# runs the two in one hold.
# Usage (root, repository root, the project's venv active): bash study/2026-11-29-intel-mpi-verify/run.sh OUT
set -u
out=${1:?output directory}
here=$(cd "$(dirname "$0")" && pwd)
for c in ${COLLS:-alltoall allreduce bcast allgather}; do
  while [ -e /tmp/commodel-pause ]; do sleep 30; done
  COLLS=${c//+/ } setsid flock /tmp/commodel-machine.lock \
    bash "$here/../2026-11-28-mpis-two-rack-8/run.sh" "$out" intel-mpi &
  pid=$!
  while kill -0 $pid 2>/dev/null; do
    if [ -e /tmp/commodel-pause ]; then
      echo "pause file: stopping $c"; kill -TERM -- -$pid; wait $pid; exit 3
    fi
    sleep 5
  done
  wait $pid
done
