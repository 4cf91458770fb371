#!/bin/bash
# How the ranks share the 2 cores: ring allreduce of 32 KiB on 16 ranks (spin.py) on
# two-rack-16 (token buckets; ranks under SCHED_RR 1 with mpi_yield_when_idle 1, the
# launcher's default), the same with --no-rt (SCHED_OTHER), with --no-rt and
# mpi_yield_when_idle 0 (pure busy polling), and two-rack-16-serial (SCHED_OTHER, yield);
# per rank its CPU share over 3 s and scheduling policy, the machine's busy share
# (cpuuse.py), the time per call. Quiet machine.
set -u
cd "$(dirname "$0")"
exec > >(tee run.log) 2>&1
PY=$(command -v python3)
name=cs16
trap 'commodel cluster down --name $name >/dev/null 2>&1' EXIT
run() {  # SPEC CALLS [mpirun options]
  local spec=$1 calls=$2
  shift 2
  commodel cluster up --spec ../../examples/clusters/$spec.yaml --name $name >/dev/null || exit 1
  date -u +"%H:%M:%S $spec $*"
  "$PY" cpuuse.py "^$PY spin.py" 3 -- commodel cluster mpirun --name $name "$@" \
    --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 4 -- \
    "$PY" spin.py allreduce 32KiB "$calls" 2>&1 | grep -v setpgid
  commodel cluster down --name $name >/dev/null 2>&1
}
run two-rack-16 600
run two-rack-16 600 --no-rt
run two-rack-16 40 --no-rt --mca mpi_yield_when_idle 0
run two-rack-16-serial 100
date -u +"%H:%M:%S done"
