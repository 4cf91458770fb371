#!/bin/bash
# Intel MPI feasibility on a 4-host emulated cluster. Run under the machine lock.
set -u
W=/work/wt-impi; PFX=$W/.mpi/intel-mpi; CM=$W/.venv/bin/commodel
name=impif4
trap '$CM cluster down --name $name' EXIT
$CM cluster up --spec /tmp/impi-work/flat-4.yaml --name $name || exit 1
ls /run/commodel/
agent=$(ls /run/commodel/$name*agent* 2>/dev/null | head -1)
echo "agent: $agent"
[ -n "$agent" ] || { $CM cluster mpirun --name $name --dry-run -- true; agent=$(ls /run/commodel/$name*agent* | head -1); }
printf 'h0:1\nh1:1\nh2:1\nh3:1\n' > /tmp/impi-work/hosts
run() {
  timeout ${T:-120} ip netns exec cm-$name-ctl $PFX/bin/mpiexec -launcher ssh -launcher-exec $agent -iface cm-mgmt \
    -f /tmp/impi-work/hosts -ppn 1 -n 4 -genv I_MPI_FABRICS ofi -genv FI_PROVIDER tcp -genv FI_TCP_IFACE cm-data \
    -genv I_MPI_PIN 0 "$@"
  echo "exit $?"
}
echo "== hostname"; run hostname
echo "== debug 5 allreduce"; run -genv I_MPI_DEBUG 5 $PFX/bin/python -c "from mpi4py import MPI; c=MPI.COMM_WORLD; print(c.rank, MPI.Get_processor_name(), c.allreduce(c.rank))"
for alg in 0 1 2 8; do
  echo "== allreduce I_MPI_ADJUST_ALLREDUCE=$alg"; run -genv I_MPI_ADJUST_ALLREDUCE $alg $PFX/bin/python /tmp/impi-work/probe.py allreduce 1048576
done
echo "== allreduce ranges 1:0-65536;8:65537-4194304"; run -genv I_MPI_ADJUST_ALLREDUCE '1:0-65536;8:65537-4194304' $PFX/bin/python /tmp/impi-work/probe.py allreduce 65536,1048576
$CM cluster status --name $name | head -40
