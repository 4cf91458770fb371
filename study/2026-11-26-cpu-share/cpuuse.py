"""How much CPU the ranks of a run get: cpuuse.py PATTERN SECONDS -- COMMAND...

Runs COMMAND (an mpirun of ours); 2 s later, and SECONDS after that, reads the CPU time
(utime + stime) of every process whose command line matches the regular expression PATTERN
(the ranks: Open MPI's daemons start them, so they are not COMMAND's children) and the
machine's busy time (/proc/stat). Prints each rank's share of one core over the measured
interval, its scheduling policy and priority, the ranks' sum and the machine's busy share
of its cores; then waits for COMMAND and returns its exit code."""

import os
import re
import subprocess
import sys
import time

POLICY = {os.SCHED_OTHER: "OTHER", os.SCHED_FIFO: "FIFO", os.SCHED_RR: "RR"}


def ranks(pattern: re.Pattern) -> dict[int, int]:
    """{pid: utime + stime in clock ticks} of the matching processes."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            if not pattern.search(cmd):
                continue
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            out[int(d)] = int(fields[11]) + int(fields[12])
        except OSError:
            continue
    return out


def machine() -> tuple[int, int]:
    """(busy, total) ticks of all cores."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:8]]
    return v[0] + v[1] + v[2] + v[4] + v[5] + v[6], sum(v)


def main(argv: list[str]) -> int:
    pattern, seconds, cmd = re.compile(argv[0]), float(argv[1]), argv[3:]
    proc = subprocess.Popen(cmd)
    time.sleep(2.0)
    t0, a, m0 = time.monotonic(), ranks(pattern), machine()
    time.sleep(seconds)
    t1, b, m1 = time.monotonic(), ranks(pattern), machine()
    hz, dt = os.sysconf("SC_CLK_TCK"), t1 - t0
    total = 0.0
    for pid in sorted(set(a) & set(b)):
        share = (b[pid] - a[pid]) / hz / dt
        total += share
        try:
            pol = POLICY.get(os.sched_getscheduler(pid), "?")
            prio = os.sched_getparam(pid).sched_priority
        except OSError:
            pol, prio = "-", 0
        print(f"  rank pid {pid}: {100 * share:5.1f}% of a core, {pol} {prio}")
    print(f"ranks: {total:.2f} cores over {dt:.2f} s")
    print(f"machine: {100 * (m1[0] - m0[0]) / (m1[1] - m0[1]):.0f}% busy of {os.cpu_count()} cores")
    return proc.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
