import sys, time, statistics as st
from mpi4py import MPI
from commodel.measure.common import sync_start, polite_barrier
comm = MPI.COMM_WORLD
r = comm.Get_rank(); n = comm.Get_size()
for members in ([0, 1, 2], [0, 3, 5], list(range(n))):
    color = 0 if r in members else MPI.UNDEFINED
    sub = comm.Split(color, r)
    out = []
    if sub != MPI.COMM_NULL:
        for rep in range(40):
            sync_start(sub)
            t = time.monotonic()
            ts = sub.gather(t, root=0)
            if sub.Get_rank() == 0:
                m = min(ts); out.append([1e3 * (x - m) for x in ts])
            time.sleep(0.01)
        if sub.Get_rank() == 0:
            print(MPI.Get_library_version().splitlines()[0][:20], members)
            for k in range(sub.Get_size()):
                v = [o[k] for o in out]
                print(f"  member {k}: exit after the first, ms: median {st.median(v):.3f} p90 {sorted(v)[int(.9*len(v))]:.3f}")
        sub.Free()
    polite_barrier(comm)
