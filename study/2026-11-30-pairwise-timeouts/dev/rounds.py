"""Rounds of concurrent flows, with the timeouts the hosts count: which flows time out?

commodel cluster mpirun --name NAME -- python rounds.py OUT.json [--sizes 4096,...]
    [--reps 5] [--set NAME=SRC>DST,SRC>DST,... ...]

One rank per host. Each round: a barrier, then every flow of the set posts its m bytes at
once (MPI_Isend / MPI_Irecv, Waitall), then the round's time (the last rank's end, from the
barrier) and the sum over the hosts of TcpExt TCPTimeouts during the round. Sets: every
``shift-s`` (node i sends to i + s mod n, s = 1 .. n - 1: the pairwise exchange's steps,
each a round of its own) and the ``--set`` lists; with ``--chain`` instead one set, the
steps back to back (each rank on to its next step once its own is done), reps x 6 rounds. Diagnosis for issue 38, not a product
measurement (that is ``measure ports``).
"""

import argparse
import json
import time

from mpi4py import MPI

from commodel.measure.ports import timeouts_counter


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--sizes", default="4096,8192,16384,32768,65536,131072,262144")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument(
        "--chain",
        action="store_true",
        help="instead: the shifts back to back as one round, each rank starting step s + 1 "
        "once its own step s is done (Open MPI's pairwise alltoall, no barrier between steps)",
    )
    a = ap.parse_args()
    comm = MPI.COMM_WORLD
    me, n = comm.Get_rank(), comm.Get_size()
    sets = {f"shift-{s}": [(i, (i + s) % n) for i in range(n)] for s in range(1, n)}
    if a.chain:
        sets = {"chain": []}
    for spec in a.set:
        name, flows = spec.split("=")
        sets[name] = [tuple(int(x) for x in f.split(">")) for f in flows.split(",")]
    sizes = [int(x) for x in a.sizes.split(",")]
    buf = bytearray(max(sizes))
    rbufs = [bytearray(max(sizes)) for _ in range(n)]
    rows = []
    for m in sizes:
        for name, flows in sets.items():
            for rep in range(a.reps):
                comm.Barrier()
                before = timeouts_counter() or 0
                comm.Barrier()
                t0 = time.perf_counter()
                if a.chain:
                    for step in range(1, n):
                        src, dst = (me - step) % n, (me + step) % n
                        reqs = [comm.Irecv([rbufs[src], m, MPI.BYTE], source=src, tag=step)]
                        reqs.append(comm.Isend([buf, m, MPI.BYTE], dest=dst, tag=step))
                        MPI.Request.Waitall(reqs)
                reqs = [
                    comm.Irecv([rbufs[s], m, MPI.BYTE], source=s, tag=7)
                    for s, d in flows
                    if d == me
                ]
                reqs += [comm.Isend([buf, m, MPI.BYTE], dest=d, tag=7) for s, d in flows if s == me]
                MPI.Request.Waitall(reqs)
                dt = time.perf_counter() - t0
                comm.Barrier()  # every flow received: every retransmission timer has fired
                after = timeouts_counter() or 0
                t = comm.reduce(dt, op=MPI.MAX, root=0)
                to = comm.reduce(after - before, op=MPI.SUM, root=0)
                if me == 0:
                    rows.append({"set": name, "size": m, "rep": rep, "time_s": t, "timeouts": to})
        if me == 0:
            with open(a.out, "w") as fh:
                json.dump(rows, fh)
            sub = [r for r in rows if r["size"] == m]
            print(m, "timeouts", sum(r["timeouts"] for r in sub), "rounds", len(sub), flush=True)


if __name__ == "__main__":
    main()
