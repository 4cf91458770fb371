"""Per-peer TCP bytes a rank sends during one collective, read from the kernel's sockets
(ss -tin bytes_acked) in the rank's own network namespace: feasibility probe for Intel MPI."""
import re, subprocess, sys, socket
import numpy as np
from mpi4py import MPI

def sent_by_peer():
    out = subprocess.run(["ss", "-tinHO", "state", "established"], capture_output=True, text=True).stdout
    peers = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) < 5:
            continue
        local, peer = f[2], f[3]
        if not local.startswith("198.18."):
            continue
        m = re.search(r"bytes_acked:(\d+)", line)
        ip = peer.rsplit(":", 1)[0]
        peers[ip] = peers.get(ip, 0) + (int(m.group(1)) if m else 0)
    return peers

comm = MPI.COMM_WORLD
r, p = comm.rank, comm.size
coll = sys.argv[1]
sizes = [int(s) for s in sys.argv[2].split(",")]
for size in sizes:
    n = size // 8 if coll == "allreduce" else size
    if coll == "allreduce":
        a = np.ones(n); b = np.empty_like(a); f = lambda: comm.Allreduce(a, b)
    elif coll == "bcast":
        a = np.ones(size, dtype=np.uint8); f = lambda: comm.Bcast(a, 0)
    elif coll == "allgather":
        a = np.ones(size, dtype=np.uint8); b = np.empty(size * p, dtype=np.uint8); f = lambda: comm.Allgather(a, b)
    elif coll == "alltoall":
        a = np.ones(size * p, dtype=np.uint8); b = np.empty_like(a); f = lambda: comm.Alltoall(a, b)
    f(); comm.Barrier()
    import time; time.sleep(0.3); comm.Barrier()
    before = sent_by_peer()
    t = MPI.Wtime(); f(); t = MPI.Wtime() - t
    comm.Barrier(); time.sleep(0.3); comm.Barrier()
    after = sent_by_peer()
    delta = {ip: after.get(ip, 0) - before.get(ip, 0) for ip in after}
    rows = comm.gather((socket.gethostname(), delta, t), 0)
    if r == 0:
        print(f"{coll} {size} B per rank:")
        for rank, (host, d, tt) in enumerate(rows):
            print(f"  rank {rank} on {host} {tt*1e3:.1f} ms: " + ", ".join(f"{ip}:{v}" for ip, v in sorted(d.items()) if v))
        sys.stdout.flush()
