"""Do ranks waiting in a collective spin or sleep? Per rank: CPU time (process_time) over
wall time while running REPS broadcasts of SIZE bytes; the sum over ranks against the
machine's cores x wall time."""
import os
import sys
import time

from mpi4py import MPI

comm = MPI.COMM_WORLD
size, reps = int(sys.argv[1]), int(sys.argv[2])
buf = bytearray(size)
comm.Barrier()
for _ in range(5):
    comm.Bcast(buf, root=0)
comm.Barrier()
def stat():
    """(idle, softirq, all) jiffies of the machine, and the wire daemon's utime + stime."""
    with open("/proc/stat") as fh:
        f = [int(x) for x in fh.readline().split()[1:]]
    wire = 0
    pid = os.environ.get("WIRE_PID")
    if pid:
        with open(f"/proc/{pid}/stat") as fh:
            g = fh.read().rsplit(")", 1)[1].split()
        wire = int(g[11]) + int(g[12])
    return f[3] + f[4], f[6], sum(f[:8]), wire


s0 = stat()
w0, c0 = time.perf_counter(), time.process_time()
for _ in range(reps):
    comm.Bcast(buf, root=0)
w1, c1 = time.perf_counter(), time.process_time()
s1 = stat()
comm.Barrier()
got = comm.gather((w1 - w0, c1 - c0), root=0)
if comm.rank == 0:
    wall = max(w for w, _ in got)
    cpu = [c for _, c in got]
    print(f"size {size} reps {reps}: wall {wall * 1e3:.1f} ms, per-rank CPU/wall "
          + " ".join(f"{c / wall:.2f}" for c in cpu)
          + f", sum {sum(cpu) / wall:.2f} of {os.cpu_count()} cores; machine: idle "
          f"{(s1[0] - s0[0]) / (s1[2] - s0[2]):.2f}, softirq {(s1[1] - s0[1]) / (s1[2] - s0[2]):.2f}"
          f", wire daemon {(s1[3] - s0[3]) / (s1[2] - s0[2]):.2f} (of all CPU time)")
