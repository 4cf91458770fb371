# The bytes Intel MPI's default sends to each peer in one call (python -m commodel.cluster.sockets),
# alltoall and allgather at 1, 8 and 64 KiB on two-rack-8, one rank a host. Usage (root):
# flock /tmp/commodel-machine.lock bash study/2026-11-29-intel-mpi-verify/probe-default.sh > OUT/probe-default.log
set -u
cd "$(dirname "$0")/../.."
C=.venv/bin/commodel
trap '$C cluster down --name impi2p >/dev/null 2>&1' EXIT
$C cluster up --spec examples/clusters/two-rack-8.yaml --name impi2p >/dev/null || exit 1
for coll in alltoall allgather; do
  date -u +%T
  $C cluster mpirun --name impi2p --mpirun .mpi/intel-mpi/bin/mpiexec -- .mpi/intel-mpi/bin/python -m commodel.cluster.sockets $coll 1024,8192,65536
done
