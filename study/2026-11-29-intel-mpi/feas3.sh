#!/bin/bash
set -u
W=/work/wt-impi; PFX=$W/.mpi/intel-mpi; CM=$W/.venv/bin/commodel
name=impif4
trap '$CM cluster down --name $name' EXIT
$CM cluster up --spec /tmp/impi-work/flat-4.yaml --name $name || exit 1
for setting in "" "I_MPI_THREAD_YIELD 2" "I_MPI_THREAD_YIELD 3" "I_MPI_WAIT_MODE 1" "I_MPI_THREAD_YIELD 3 -genv I_MPI_SPIN_COUNT 1"; do
  for rep in 1 2; do
  echo "== [$setting] $rep"
  g=(); [ -n "$setting" ] && g=(-genv $setting)
  timeout 120 $CM cluster mpirun --name $name --mpirun $PFX/bin/mpiexec "${g[@]}" -- $PFX/bin/python /tmp/impi-work/lat.py 2>&1 | tail -3
  done
done
$CM cluster mpirun --name $name --mpirun $PFX/bin/mpiexec --dry-run -- python
