"""A token of M bytes passed around the ring of all ranks (rank i receives from i - 1, then
sends to i + 1) N times round: one hop at a time, so one or two ranks are at work and the
others poll. Rank 0 prints: ranks, size, rounds, the mean hop (us).

Usage (under mpirun): python3 token_ring.py M N"""
import sys
import time

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
m, n = int(sys.argv[1]), int(sys.argv[2])
buf = bytearray(m)
nxt, prv = (rank + 1) % size, (rank - 1) % size


def lap():
    if rank == 0:
        comm.Send(buf, dest=nxt)
        comm.Recv(buf, source=prv)
    else:
        comm.Recv(buf, source=prv)
        comm.Send(buf, dest=nxt)


for _ in range(20):  # warm-up
    lap()
comm.Barrier()
t0 = time.perf_counter()
for _ in range(n):
    lap()
t = time.perf_counter() - t0
if rank == 0:
    print(f"ranks {size} size {m} rounds {n} hop_us {t / n / size * 1e6:.1f}", flush=True)
