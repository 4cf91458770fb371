#!/bin/bash
set -u
W=/work/wt-impi; PFX=$W/.mpi/intel-mpi; CM=$W/.venv/bin/commodel
name=impif4
trap '$CM cluster down --name $name' EXIT
$CM cluster up --spec /tmp/impi-work/flat-4.yaml --name $name || exit 1
for v in "" "1:0-65535@4-4;2:65536-2147483647@4-4" "1:0-65535;2:65536-2147483647" "1:0-65535@1-8;2:65536-2147483647@1-8" "1:0-65535@4;2:65536-2147483647@4" "1" "2:65536-2147483647@4-4;1:0-65535@4-4"; do
  echo "== [$v]"
  g=(); [ -n "$v" ] && g=(-genv I_MPI_ADJUST_ALLREDUCE "$v")
  timeout 120 $CM cluster mpirun --name $name --mpirun $PFX/bin/mpiexec "${g[@]}" -genv I_MPI_DEBUG 5 -- $PFX/bin/python -m commodel.cluster.sockets allreduce 1024,8192,1048576 2>&1 | grep -E "^\{|ADJUST|Incorrect"
done
