"""The bytes a lone message puts on the wire, counted by the interfaces (tx_bytes, tx_packets).

Run under mpirun on the emulated cluster, one rank per host:

    commodel cluster mpirun --name wb8 -- python3 txbytes.py cm-data 512,1KiB,32KiB

Two stepped patterns of k messages per rank (k = 20, then 100; the slope between them
leaves out the barriers' traffic), each step waiting for the message it receives before
the next send, as the steps of a ring collective do:

* ``ring``: rank i sends to i+1 and receives from i-1 (each node's link carries its
  message and the acknowledgements of the one it receives);
* ``exchange``: ranks 2i and 2i+1 send to each other (the acknowledgements can ride on
  the data going back).

Printed per size: bytes and packets each rank's interface sent per message (mean over
ranks), in both patterns.
"""

from __future__ import annotations

import sys

from mpi4py import MPI

from commodel.units import format_size, parse_size


def counters(dev: str) -> tuple[int, int]:
    base = f"/sys/class/net/{dev}/statistics/"
    with open(base + "tx_bytes") as b, open(base + "tx_packets") as p:
        return int(b.read()), int(p.read())


def steps(comm, pattern: str, m: int, k: int, buf, rbuf) -> None:
    rank, p = comm.Get_rank(), comm.Get_size()
    if pattern == "ring":
        dst, src = (rank + 1) % p, (rank - 1) % p
    else:
        dst = src = rank ^ 1
    for _ in range(k):
        req = comm.Irecv([rbuf, m, MPI.BYTE], src, 7)
        comm.Send([buf, m, MPI.BYTE], dst, 7)
        req.Wait()


def per_message(comm, dev: str, pattern: str, m: int) -> tuple[float, float]:
    buf, rbuf = bytearray(m), bytearray(m)
    steps(comm, pattern, m, 5, buf, rbuf)  # connections up
    counts = {}
    for k in (20, 100):
        comm.Barrier()
        b0, p0 = counters(dev)
        steps(comm, pattern, m, k, buf, rbuf)
        b1, p1 = counters(dev)
        comm.Barrier()
        counts[k] = (b1 - b0, p1 - p0)
    return tuple((counts[100][i] - counts[20][i]) / 80 for i in (0, 1))


def main(argv: list[str]) -> None:
    comm = MPI.COMM_WORLD
    dev, sizes = argv[0], [parse_size(x) for x in argv[1].split(",")]
    if comm.Get_rank() == 0:
        print(f"{'size':>8} {'pattern':>9} {'bytes/msg':>10} {'packets/msg':>12} {'ranks':>6}")
    for m in sizes:
        for pattern in ("exchange", "ring"):
            got = comm.gather(per_message(comm, dev, pattern, m), root=0)
            if comm.Get_rank() == 0:
                b = sum(g[0] for g in got) / len(got)
                pk = sum(g[1] for g in got) / len(got)
                print(f"{format_size(m):>8} {pattern:>9} {b:10.1f} {pk:12.2f} {len(got):>6}")


if __name__ == "__main__":
    main(sys.argv[1:])
