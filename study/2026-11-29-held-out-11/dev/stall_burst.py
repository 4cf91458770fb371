"""All-to-all bursts of m bytes posted as ``measure ports`` posts its all-to-all probe, each
round's time and every TcpExt counter of /proc/net/netstat that moved, summed over the
hosts (run under ``commodel cluster mpirun``, one rank per host; see stall.sh):

    python stall_burst.py SIZES REPS      # SIZES: comma-separated bytes
"""

import sys

import numpy as np
from mpi4py import MPI


def netstat() -> dict[str, int]:
    with open("/proc/net/netstat") as fh:
        lines = fh.read().splitlines()
    out = {}
    for names, values in zip(lines[::2], lines[1::2]):
        keys, vals = names.split(), values.split()
        for k, v in zip(keys[1:], vals[1:]):
            out[keys[0] + k] = int(v)
    return out


def main(sizes: list[int], reps: int) -> None:
    comm = MPI.COMM_WORLD
    me, n = comm.Get_rank(), comm.Get_size()
    buf = np.zeros(max(sizes), dtype=np.uint8)
    rbuf = np.zeros(max(sizes) * n, dtype=np.uint8)
    flows = [(i, (i - k) % n) for k in range(1, n) for i in range(n)]
    for m in sizes:
        for rep in range(reps):
            reqs = [
                comm.Irecv([rbuf[s * m : (s + 1) * m], m, MPI.BYTE], s, 91)
                for s, d in flows
                if d == me
            ]
            before = netstat()
            comm.Barrier()
            t0 = MPI.Wtime()
            sends = [comm.Isend([buf, m, MPI.BYTE], d, 91) for s, d in flows if s == me]
            MPI.Request.Waitall(reqs)
            end = MPI.Wtime() - t0
            MPI.Request.Waitall(sends)
            comm.Barrier()
            after = netstat()
            moved = {k: v - before.get(k, 0) for k, v in after.items() if v != before.get(k, 0)}
            every, ends = comm.gather(moved, root=0), comm.gather(end, root=0)
            if me == 0:
                total: dict[str, int] = {}
                for d in every:
                    for k, v in d.items():
                        total[k] = total.get(k, 0) + v
                shown = {
                    k.replace("TcpExt:", ""): v
                    for k, v in sorted(total.items())
                    if k.startswith("TcpExt:")
                }
                print(f"{m} B round {rep}: {max(ends) * 1e3:.1f} ms {shown}", flush=True)


if __name__ == "__main__":
    main([int(x) for x in sys.argv[1].split(",")], int(sys.argv[2]))
