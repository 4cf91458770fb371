"""Per repetition of a collective after commodel's start barrier: every rank's
CLOCK_REALTIME (shared by the emulated hosts) at entry and exit. Prints JSON on rank 0.
Usage: entry.py COLLECTIVE SIZE REPS (alltoall: SIZE to each rank; bcast, allreduce: the buffer)"""

import json
import sys
import time

from mpi4py import MPI

from commodel.measure.common import sync_start

comm = MPI.COMM_WORLD
P, r = comm.Get_size(), comm.Get_rank()
coll, m, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
B = MPI.BYTE
sbuf, rbuf = bytearray(m * P), bytearray(m * P)
recs = []
for _i in range(reps + 1):
    sync_start(comm)
    t0 = time.clock_gettime(time.CLOCK_REALTIME)
    if coll == "bcast":
        comm.Bcast([sbuf, m, B], root=0)
    elif coll == "allreduce":
        comm.Allreduce([sbuf, m, B], [rbuf, m, B], op=MPI.BOR)
    else:
        comm.Alltoall([sbuf, m, B], [rbuf, m, B])
    t1 = time.clock_gettime(time.CLOCK_REALTIME)
    recs.append((t0, t1))
every = comm.gather(recs[1:], root=0)
if r == 0:
    print(json.dumps({"collective": coll, "size": m, "ranks": P, "recs": every}))
