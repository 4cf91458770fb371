"""Is TCP's duplex loss a rate or a per-round delay? Rounds of k messages per flow.

Run under mpirun on the emulated cluster, one rank per host (every rank reads the same
CLOCK_MONOTONIC):

    commodel cluster mpirun --name tr8 -- python3 stream.py 4KiB,8KiB,16KiB 1,4,16 12 [PATTERN]

Two patterns, as `measure efficiency` times them, but with k messages per flow posted at
once (k MPI_Isend of m bytes to the peer, k MPI_Irecv from it), after a barrier and a 20
ms pause:

* oneway: rank 2i -> 2i+1;
* duplex: rank i -> i+1 mod P (every rank sends and receives);
* or, with PATTERN ``exchange``, instead of duplex: 2i <-> 2i+1 (both ways of each pair).

Printed per (m, k): the median over repetitions of the mean receive time (from rank 0's
post to each receiver's last receive), per pattern, the time per message (that over k) and
e_d(m, k) = oneway / duplex. If the duplex loss is a rate, e_d does not depend on k; if it
is a delay per round, e_d goes to 1 as k grows.
"""

from __future__ import annotations

import statistics
import sys
import time

from mpi4py import MPI

from commodel.units import format_size, parse_size


def flows(pattern: str, p: int) -> list[tuple[int, int]]:
    if pattern == "oneway":
        return [(2 * i, 2 * i + 1) for i in range(p // 2)]
    if pattern == "exchange":
        return [f for i in range(p // 2) for f in ((2 * i, 2 * i + 1), (2 * i + 1, 2 * i))]
    return [(i, (i + 1) % p) for i in range(p)]


def one_round(comm, pattern: str, m: int, k: int, bufs) -> float | None:
    rank, p = comm.Get_rank(), comm.Get_size()
    fl = flows(pattern, p)
    comm.Barrier()
    time.sleep(0.02)
    comm.Barrier()
    t0 = time.clock_gettime(time.CLOCK_MONOTONIC)
    reqs = []
    srcs = [s for s, d in fl if d == rank]
    dsts = [d for s, d in fl if s == rank]
    for s in srcs:
        reqs += [comm.Irecv(bufs[1][j], source=s, tag=j) for j in range(k)]
    for d in dsts:
        reqs += [comm.Isend(bufs[0][j], dest=d, tag=j) for j in range(k)]
    MPI.Request.Waitall(reqs)
    t1 = time.clock_gettime(time.CLOCK_MONOTONIC)
    starts = comm.gather(t0, root=0)
    ends = comm.gather(t1 if srcs else None, root=0)
    if rank != 0:
        return None
    t = min(starts)
    return statistics.mean(e - t for e in ends if e is not None)


def main(argv: list[str]) -> None:
    comm = MPI.COMM_WORLD
    sizes = [parse_size(x) for x in argv[0].split(",")]
    ks = [int(x) for x in argv[1].split(",")]
    reps = int(argv[2])
    both = argv[3] if len(argv) > 3 else "duplex"
    if comm.Get_rank() == 0:
        print(
            f"{'size':>8} {'k':>3} {'oneway ms':>10} {both + ' ms':>10} "
            f"{'per msg 1w':>10} {'per msg 2w':>10} {'e_' + both[0]:>6}",
            flush=True,
        )
    for m in sizes:
        for k in ks:
            bufs = [[bytearray(m) for _ in range(k)] for _ in range(2)]
            res = {}
            for pattern in ("oneway", both):
                vals = []
                for r in range(reps + 1):  # the first sets up the connections
                    v = one_round(comm, pattern, m, k, bufs)
                    if r > 0 and v is not None:
                        vals.append(v)
                if vals:
                    res[pattern] = statistics.median(vals)
            if comm.Get_rank() == 0:
                o, d = res["oneway"], res[both]
                print(
                    f"{format_size(m):>8} {k:>3} {o * 1e3:10.3f} {d * 1e3:10.3f} "
                    f"{o / k * 1e3:10.3f} {d / k * 1e3:10.3f} {o / d:6.3f}",
                    flush=True,
                )


if __name__ == "__main__":
    main(sys.argv[1:])
