"""Steps of pairwise exchanges: the first K pairs (2i, 2i+1) of the ranks exchange M bytes
(MPI_Sendrecv) N times, timed from a barrier; the other ranks wait in the closing barrier
(polling, as idle MPI ranks do). Rank 0 prints one line: ranks, pairs, size, steps, the
mean step (us, the slowest rank at work) and the CPU time (user + system, getrusage, from
the start to the closing barrier, us a step) of a rank at work and of an idle one.

Usage (under mpirun): python3 exchange.py K M N"""
import resource
import sys
import time

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
k, m, n = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
buf, out = bytearray(m), bytearray(m)
works = rank < 2 * k
peer = rank ^ 1
for _ in range(50 if works else 0):  # warm-up
    comm.Sendrecv(buf, dest=peer, recvbuf=out, source=peer)
comm.Barrier()
r0 = resource.getrusage(resource.RUSAGE_SELF)
t0 = time.perf_counter()
if works:
    for _ in range(n):
        comm.Sendrecv(buf, dest=peer, recvbuf=out, source=peer)
t1 = time.perf_counter()
comm.Barrier()  # idle ranks wait here for the whole run
r1 = resource.getrusage(resource.RUSAGE_SELF)
cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
rows = comm.gather((works, t1 - t0, cpu), root=0)
if rank == 0:
    busy = [r for r in rows if r[0]]
    step = max(r[1] for r in busy) / n
    cpu_busy = sum(r[2] for r in busy) / len(busy) / n
    idle = [r for r in rows if not r[0]]
    # the CPU of a rank from the start to the closing barrier's end, per step (idle ranks
    # spend it all in the barrier)
    cpu_idle = sum(r[2] for r in idle) / len(idle) / n if idle else 0.0
    print(
        f"ranks {size} pairs {k} size {m} steps {n} step_us {step * 1e6:.1f} "
        f"cpu_at_work_us {cpu_busy * 1e6:.1f} cpu_idle_us {cpu_idle * 1e6:.1f}",
        flush=True,
    )
