"""Per-peer TCP bytes each rank sends during one call of each collective (kernel socket
counters, ss bytes_acked, in the rank's own network namespace); JSON lines on rank 0."""
import json, re, subprocess, sys, time
import numpy as np
from mpi4py import MPI

def sent_by_peer():
    out = subprocess.run(["ss", "-tinHO", "state", "established"], capture_output=True, text=True).stdout
    peers = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) < 4 or not f[2].startswith("198.18."):
            continue
        m = re.search(r"bytes_acked:(\d+)", line)
        host = int(f[3].rsplit(":", 1)[0].split(".")[-1]) - 10
        peers[host] = peers.get(host, 0) + (int(m.group(1)) if m else 0)
    return peers

comm = MPI.COMM_WORLD
r, p = comm.rank, comm.size
tag = sys.argv[1]
for spec in sys.argv[2:]:
    coll, size = spec.split(":"); size = int(size)
    if coll == "allreduce":
        a = np.ones(size, dtype=np.uint8); b = np.empty_like(a); f = lambda: comm.Allreduce(a, b, op=MPI.BOR)
    elif coll == "bcast":
        a = np.ones(size, dtype=np.uint8); f = lambda: comm.Bcast(a, 0)
    elif coll == "allgather":
        a = np.ones(size, dtype=np.uint8); b = np.empty(size * p, dtype=np.uint8); f = lambda: comm.Allgather(a, b)
    elif coll == "alltoall":
        a = np.ones(size * p, dtype=np.uint8); b = np.empty_like(a); f = lambda: comm.Alltoall(a, b)
    f(); comm.Barrier(); time.sleep(0.2); comm.Barrier()
    before = sent_by_peer()
    t = MPI.Wtime(); f(); t = MPI.Wtime() - t
    comm.Barrier(); time.sleep(0.2); comm.Barrier()
    after = sent_by_peer()
    row = [after.get(h, 0) - before.get(h, 0) for h in range(p)]
    rows = comm.gather(row, 0)
    ts = comm.gather(t, 0)
    if r == 0:
        print(json.dumps({"tag": tag, "coll": coll, "size": size, "p": p, "bytes": rows, "t": ts}), flush=True)
