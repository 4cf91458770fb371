import sys, time, statistics as st
import numpy as np
from mpi4py import MPI
c = MPI.COMM_WORLD
out = []
for size, reps in ((1024, 200), (65536, 30), (1048576, 6)):
    a = np.ones(size, dtype=np.uint8); b = np.empty_like(a)
    ts = []
    for i in range(reps + 2):
        c.Barrier(); t = MPI.Wtime(); c.Allreduce(a, b, op=MPI.BOR); ts.append(MPI.Wtime() - t)
    ts = c.gather(ts[2:], 0)
    if c.rank == 0:
        per = [max(x) for x in zip(*ts)]
        out.append(f"{size}: median {st.median(per)*1e3:.2f} ms p90 {sorted(per)[int(.9*len(per))]*1e3:.2f}")
cpu = time.process_time()
cpus = c.gather(cpu, 0)
if c.rank == 0:
    print(" | ".join(out), "| cpu s", " ".join(f"{x:.1f}" for x in cpus), flush=True)
