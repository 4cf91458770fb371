"""Why alltoall at 32 KiB took ~200 ms more than predicted on dev draw rs1x3 (7 hosts,
21 KiB switch ports, serialize) while the hosts counted no TCPTimeouts.

    python study/2026-11-28-held-out/diagnose_32k.py OUT_DIR   (root; brings up its own cluster)

Runs the study's alltoall schedules at 16, 32 and 64 KiB on the draw's cluster and reads
every TcpExt and Tcp counter of every host around each run: which recovery (RTO, tail
loss probe, fast retransmit, SACK) the extra time comes with.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from commodel.study import specs, workload

PY = sys.executable
SEED, INDEX = 1, 3
NAME = "dg32k"


def counters(state: dict) -> dict[str, int]:
    total: dict[str, int] = {}
    for host in state["hosts"]:
        for fname in ("/proc/net/netstat", "/proc/net/snmp"):
            out = subprocess.run(
                ["ip", "netns", "exec", host["ns"], "cat", fname],
                capture_output=True, text=True, check=True,
            ).stdout.splitlines()  # fmt: skip
            for head, vals in zip(out[::2], out[1::2]):
                prefix = head.split(":")[0]
                if prefix not in ("TcpExt", "Tcp"):
                    continue
                for k, v in zip(head.split()[1:], vals.split()[1:]):
                    if v.lstrip("-").isdigit():
                        total[f"{prefix}.{k}"] = total.get(f"{prefix}.{k}", 0) + int(v)
    return total


def main(out: str) -> None:
    import yaml

    from commodel.cluster.state import read_state

    os.makedirs(out, exist_ok=True)
    spec = specs.draw_spec(SEED, INDEX)
    path = os.path.join(out, "spec.yaml")
    with open(path, "w") as f:
        yaml.safe_dump(spec, f)
    sched_dir = os.path.join(out, "schedules")
    work = workload.Workload(
        name="diag", alltoall_sizes=(16384, 32768, 65536), random_size=65536,
        random_degrees=(), random_trials=0, forced_collectives=(), forced_sizes=(),
        pattern_reps=10, forced_min_reps=5, forced_max_reps=5,
    )  # fmt: skip
    scheds = [s.path for s in workload.write_schedules(spec["hosts"], sched_dir, work)]
    subprocess.run([PY, "-m", "commodel", "cluster", "up", "--name", NAME, "--spec", path],
                   check=True)  # fmt: skip
    results = {}
    try:
        state = read_state(NAME)
        for s in scheds:
            before = counters(state)
            db = os.path.join(out, "pattern.duckdb")
            proc = subprocess.run(
                [PY, "-m", "commodel", "cluster", "mpirun", "--name", NAME, "--", PY, "-m",
                 "commodel", "measure", "pattern", os.path.abspath(s), "--db", db,
                 "--max-reps", "10", "--timeout", "120"],
                capture_output=True, text=True,
            )  # fmt: skip
            after = counters(state)
            diff = {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)}
            results[os.path.basename(s)] = {"stdout": proc.stdout[-1500:], "counters": diff}
            print(os.path.basename(s), proc.stdout[-600:], json.dumps(diff, indent=1))
    finally:
        subprocess.run([PY, "-m", "commodel", "cluster", "down", "--name", NAME])
    with open(os.path.join(out, "counters.json"), "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
