"""In which order does one node's NIC send several messages posted at once?

Run under mpirun on the emulated cluster (one machine: every rank reads the same
CLOCK_MONOTONIC, so the times of different ranks compare):

    commodel cluster mpirun --hosts 5 -- python3 study/scripts/fanout_order.py 1,2,4 4KiB,16KiB,256KiB 15

Rank 0 posts ``MPI_Isend`` of m bytes to each peer at once (in the order given), after a
barrier and a 20 ms pause; each peer notes when its blocking receive returned. Printed per
size: the median, over the repetitions, of each peer's time after rank 0 posted. Served
one after the other (eager messages: Open MPI writes each whole into its socket), the
peers finish at about 1x, 2x, 3x one message's time; shared, all at about 3x.
"""

from __future__ import annotations

import statistics
import sys
import time

from mpi4py import MPI

from commodel.units import format_size, parse_size


def main(argv: list[str]) -> None:
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    if len(argv) != 3:
        if rank == 0:
            print("usage: fanout_order.py PEERS SIZES REPS, e.g. 1,2,4 4KiB,16KiB 15")
        sys.exit(2)
    peers = [int(x) for x in argv[0].split(",")]
    sizes = [parse_size(x) for x in argv[1].split(",")]
    reps = int(argv[2])
    if any(not 0 < p < comm.Get_size() for p in peers) or len(set(peers)) != len(peers):
        if rank == 0:
            print(f"peers must be distinct ranks 1..{comm.Get_size() - 1}, got {argv[0]}")
        sys.exit(2)
    for m in sizes:
        buf = bytearray(m)
        times: dict[int, list[float]] = {p: [] for p in peers}
        for r in range(reps + 1):  # the first repetition sets up the connections
            comm.Barrier()
            time.sleep(0.02)
            comm.Barrier()
            t = 0.0
            if rank == 0:
                t = time.clock_gettime(time.CLOCK_MONOTONIC)
                MPI.Request.Waitall([comm.Isend(buf, dest=p, tag=7) for p in peers])
            elif rank in peers:
                comm.Recv(buf, source=0, tag=7)
                t = time.clock_gettime(time.CLOCK_MONOTONIC)
            stamps = comm.gather(t, root=0)
            if rank == 0 and r > 0:
                for p in peers:
                    times[p].append(stamps[p] - stamps[0])
        if rank == 0:
            cells = "  ".join(f"->{p}: {statistics.median(times[p]) * 1e3:8.3f} ms" for p in peers)
            print(f"{format_size(m):>8}  {cells}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
