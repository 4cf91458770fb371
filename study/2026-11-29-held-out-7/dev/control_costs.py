# The cost of the controller's MPI calls on every rank of an emulated cluster (medians of
# 100): commodel cluster mpirun --name N -- python control_costs.py REPO/python
import time, statistics, sys
from mpi4py import MPI
sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else 'python')
from commodel.measure.common import polite_barrier, out_of_realtime
comm = MPI.COMM_WORLD
def bench(f, n=100):
    ts = []
    for _ in range(n):
        comm.Barrier()
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3, max(ts) * 1e3
def pb(): polite_barrier(comm)
def pb_out():
    with out_of_realtime(): polite_barrier(comm)
def gb(): comm.gather(None, root=0)
def bc(): comm.bcast(("kernel", "x", {"a": 1}), root=0)
res = {}
for name, f in [("Barrier", comm.Barrier), ("polite", pb), ("polite_outRT", pb_out), ("gather", gb), ("bcast", bc)]:
    res[name] = bench(f)
if comm.rank == 0:
    for k, (m, mx) in res.items(): print(f"{k:14s} median {m:.2f} ms  max {mx:.2f} ms")
