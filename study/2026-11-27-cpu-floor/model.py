"""The model's step for exchange.py's and token_ring.py's patterns: GOAL schedules of N steps
(exchange: K pairs among P ranks, each step a send and a receive of M bytes that the next
step waits for; token: N laps of the ring), predicted by `commodel predict` on PLATFORM
(its default model) with and without its cpu section; prints the mean step / hop (us).

Usage: python3 model.py PLATFORM [EXCHANGES TOKENS] (EXCHANGES: P:K,...; TOKENS: P,...;
default: the two-rack-8 runs of run.sh)"""
import json
import os
import subprocess
import sys
import tempfile

import yaml

N = 40


def exchange(p, k, m):
    out = [f"num_ranks {p}"]
    for r in range(p):
        out.append(f"rank {r} {{")
        if r < 2 * k:
            peer = r ^ 1
            for i in range(N):
                out += [f"s{i}: send {m}b to {peer} tag {i}", f"r{i}: recv {m}b from {peer} tag {i}"]
                if i:
                    out += [f"s{i} requires s{i - 1}", f"s{i} requires r{i - 1}", f"r{i} requires r{i - 1}"]
        out.append("}")
    return "\n".join(out) + "\n", N


def token(p, m):
    out = [f"num_ranks {p}"]
    for r in range(p):
        out.append(f"rank {r} {{")
        nxt, prv = (r + 1) % p, (r - 1) % p
        prev = None
        for i in range(N):
            ops = [("s", f"send {m}b to {nxt} tag {i}"), ("r", f"recv {m}b from {prv} tag {i}")]
            if r:
                ops.reverse()
            for kind, text in ops:
                label = f"{kind}{i}"
                out.append(f"{label}: {text}")
                if prev:
                    out.append(f"{label} requires {prev}")
                prev = label
        out.append("}")
    return "\n".join(out) + "\n", N * p


def predict(goal, platform):
    with tempfile.NamedTemporaryFile("w", suffix=".goal", delete=False) as h:
        h.write(goal)
    try:
        res = subprocess.run(["commodel", "predict", h.name, "-p", platform, "--json"],
                             check=True, capture_output=True, text=True)
    finally:
        os.unlink(h.name)
    return json.loads(res.stdout)["makespan_s"]


plat = sys.argv[1]
doc = yaml.safe_load(open(plat))
doc.pop("cpu", None)
with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as h:
    yaml.safe_dump(doc, h, sort_keys=False)
    nocpu = h.name
pairs = [tuple(int(x) for x in pk.split(":")) for pk in (sys.argv[2] if len(sys.argv) > 2 else "2:1,4:1,4:2,6:3,8:1,8:2,8:3,8:4").split(",")]
rings = [int(x) for x in (sys.argv[3] if len(sys.argv) > 3 else "2,4,6,8").split(",")]
for m in (64, 1024):
    for p, k in pairs:
        goal, steps = exchange(p, k, m)
        a, b = (predict(goal, x) / steps * 1e6 for x in (plat, nocpu))
        print(f"exchange ranks {p} pairs {k} size {m} step_us {a:.1f} (without cpu {b:.1f})")
    for p in rings:
        goal, hops = token(p, m)
        a, b = (predict(goal, x) / hops * 1e6 for x in (plat, nocpu))
        print(f"token ranks {p} size {m} hop_us {a:.1f} (without cpu {b:.1f})")
os.unlink(nocpu)
