"""Repeat one collective for a while under mpirun (for measuring the ranks' CPU use).

    commodel cluster mpirun --name N -- python3 spin.py allreduce|bcast|alltoall SIZE CALLS

Every rank calls the collective (as Open MPI decides, or as forced by --mca) CALLS times
back to back; rank 0 prints the mean time per call."""

import sys
import time

import numpy as np
from mpi4py import MPI

from commodel.units import parse_size


def main() -> None:
    comm = MPI.COMM_WORLD
    coll, size, n = sys.argv[1], parse_size(sys.argv[2]), int(sys.argv[3])
    p = comm.Get_size()
    send = np.ones(size if coll != "alltoall" else size * p, dtype=np.uint8)
    recv = np.empty_like(send)
    comm.Barrier()
    t0 = time.perf_counter()
    for _ in range(n):
        if coll == "allreduce":
            comm.Allreduce(send, recv, op=MPI.BOR)
        elif coll == "bcast":
            comm.Bcast(send, root=0)
        else:
            comm.Alltoall(send, recv)
    if comm.Get_rank() == 0:
        dt = time.perf_counter() - t0
        print(f"{coll} {size} B on {p} ranks: {n} calls, {dt / n * 1e3:.3f} ms per call")


if __name__ == "__main__":
    main()
