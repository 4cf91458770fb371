"""Entry skew of a collective after commodel's sync_start: per repetition, each rank's
CLOCK_REALTIME (shared by the emulated hosts) at entry and exit of MPI_Alltoall."""
import json
import sys
import time

from mpi4py import MPI

from commodel.measure.common import sync_start

comm = MPI.COMM_WORLD
P, r = comm.Get_size(), comm.Get_rank()
m, reps = int(sys.argv[1]), int(sys.argv[2])
sbuf, rbuf = bytearray(m * P), bytearray(m * P)
recs = []
for i in range(reps + 1):
    sync_start(comm)
    t0 = time.clock_gettime(time.CLOCK_REALTIME)
    comm.Alltoall([sbuf, m, MPI.BYTE], [rbuf, m, MPI.BYTE])
    t1 = time.clock_gettime(time.CLOCK_REALTIME)
    recs.append((t0, t1))
every = comm.gather(recs[1:], root=0)
if r == 0:
    print(json.dumps({"size": m, "ranks": P, "recs": every}))
