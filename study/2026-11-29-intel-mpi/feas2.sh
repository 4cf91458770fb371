#!/bin/bash
# Intel MPI on a 5-host emulated cluster: traffic per algorithm ID, P = 4 and 5. Under the lock.
set -u
W=/work/wt-impi; PFX=$W/.mpi/intel-mpi; CM=$W/.venv/bin/commodel
name=impif5
trap '$CM cluster down --name $name' EXIT
$CM cluster up --spec /tmp/impi-work/flat-5.yaml --name $name || exit 1
agent=/run/commodel/$name.agent
[ -e $agent ] || $CM cluster mpirun --name $name --dry-run -- true
OUT=/tmp/impi-work/traffic.jsonl
run() { # P, extra args...
  local p=$1; shift
  printf 'h0\nh1\nh2\nh3\nh4\n' | head -$p > /tmp/impi-work/hosts$p
  timeout ${T:-120} ip netns exec cm-$name-ctl $PFX/bin/mpiexec -launcher ssh -launcher-exec $agent -iface cm-mgmt \
    -f /tmp/impi-work/hosts$p -ppn 1 -n $p -genv I_MPI_FABRICS ofi -genv FI_PROVIDER tcp -genv FI_TCP_IFACE cm-data \
    -genv I_MPI_PIN 0 "$@"
  echo "exit $? $*" >&2
}
for p in 4 5; do
  for id in $(seq 0 22); do
    args=()
    [ $id -le 32 ] && args+=(-genv I_MPI_ADJUST_ALLREDUCE $id)
    [ $id -le 22 ] && args+=(-genv I_MPI_ADJUST_BCAST $id)
    [ $id -le 6 ] && args+=(-genv I_MPI_ADJUST_ALLGATHER $id)
    [ $id -le 18 ] && args+=(-genv I_MPI_ADJUST_ALLTOALL $id)
    specs="allreduce:8192 allreduce:262144 bcast:8192 bcast:262144"
    [ $id -le 6 ] && specs="$specs allgather:1024 allgather:65536"
    [ $id -le 18 ] && specs="$specs alltoall:1024 alltoall:65536"
    T=90 run $p "${args[@]}" $PFX/bin/python /tmp/impi-work/probe2.py "p$p-id$id" $specs >> $OUT
  done
done
