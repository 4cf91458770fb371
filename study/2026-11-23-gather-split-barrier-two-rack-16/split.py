"""Hypothesis test: do k sub-gathers (basic_linear) stop escalating when separated by barriers?"""
import sys, statistics, time
from mpi4py import MPI
comm = MPI.COMM_WORLD
r, n = comm.Get_rank(), comm.Get_size()
sizes = [int(s) * 1024 for s in sys.argv[1].split(",")]
ks = [int(k) for k in sys.argv[2].split(",")]
modes = sys.argv[3].split(",")
reps = int(sys.argv[4])
tag = sys.argv[5]
big = max(sizes)
sbuf = bytearray(big); rbuf = bytearray(big * n)
sv, rv = memoryview(sbuf), memoryview(rbuf)
def once(m, k, mode):
    base = m // k
    parts = [base] * (k - 1) + [m - base * (k - 1)]
    comm.Barrier()
    t0 = MPI.Wtime()
    off = 0
    for j, part in enumerate(parts):
        if mode == "barrier" and j > 0:
            comm.Barrier()
        if mode == "idle" and j > 0:  # the ports idle 5 ms: a token bucket refills
            comm.Barrier()
            time.sleep(0.005)
            comm.Barrier()
        comm.Gather([sv[off:off + part], part, MPI.BYTE], [rv[off * n:], part, MPI.BYTE] if r == 0 else None, root=0)
        off += part
    t = MPI.Wtime() - t0
    return comm.reduce(t, op=MPI.MAX, root=0)
for m in sizes:
    once(m, 1, "b2b")
    for k in ks:
        for mode in modes:
            if k == 1 and mode != modes[0]:
                continue
            ts = [once(m, k, mode) for _ in range(reps)]
            if r == 0:
                ts = [t * 1e3 for t in ts]
                print(f"{tag} m={m//1024}KiB k={k} mode={mode} mean={statistics.mean(ts):.1f} median={statistics.median(ts):.1f} min={min(ts):.1f} over200={sum(t > 200 for t in ts)}/{len(ts)}", flush=True)
