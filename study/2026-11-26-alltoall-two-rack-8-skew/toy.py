"""Packet-level toy of two-rack-8 (not commodel's model): 8 hosts in 2 racks, 100 Mbit/s
NICs, 200 Mbit/s rack-core links, drop-tail FIFO ports of 32 KiB (toward a host) and 128 KiB
(rack <-> core), every frame 1514 bytes for 1448 of payload, store and forward, no
propagation delay. Each host's NIC sends, in posting order, the messages of a linear
alltoall (to r-1, r-2, ...): all of each message open loop (a window >= m) or only its
first WIN bytes; with SKEW > 0 each host starts uniformly in [0, SKEW] s (20 draws).
Prints the drops per run at the host ports and at the backbone ports.

Usage: python3 toy.py M [WIN [SKEW]]"""

import heapq
import random
import sys
from collections import Counter, deque

P, RACK = 8, 4
m = int(sys.argv[1])
win = int(sys.argv[2]) if len(sys.argv) > 2 else 10**9
skew = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
PKT, PAY = 1514, 1448
B_HOST, B_BB = 32768, 131072


class Port:
    def __init__(s, rate, buf):
        s.rate, s.buf, s.q, s.last = rate, buf, deque(), 0.0

    def offer(s, t, size):
        while s.q and s.q[0][0] <= t:
            s.q.popleft()
        if sum(x[1] for x in s.q) + size > s.buf:
            return None
        fin = max(t, s.last) + size * 8 / s.rate
        s.last = fin
        s.q.append((fin, size))
        return fin


def rack(h):
    return h // RACK


up = {r: Port(200e6, B_BB) for r in range(2)}  # rack r -> core
down = {r: Port(200e6, B_BB) for r in range(2)}  # core -> rack r
hostp = {h: Port(100e6, B_HOST) for h in range(P)}  # rack switch -> host h


def run(seed):
    rnd = random.Random(seed)
    ev, seq = [], 0
    for r in range(P):
        t = rnd.uniform(0, skew)
        dests = [(r - i) % P for i in range(1, P)]  # basic_linear posts its sends to r-1, r-2, ...
        for d in dests:
            n = min(-(-min(m, win) // PAY), -(-m // PAY))
            for _k in range(n):
                t += PKT * 8 / 100e6
                path = [hostp[d]] if rack(r) == rack(d) else [up[rack(r)], down[rack(d)], hostp[d]]
                heapq.heappush(ev, (t, seq, path, 0, (r, d)))
                seq += 1
    drops = Counter()
    while ev:
        t, s, path, i, fl = heapq.heappop(ev)
        port = path[i]
        fin = port.offer(t, PKT)
        if fin is None:
            drops["host" if port in hostp.values() else "backbone"] += 1
            continue
        if i + 1 < len(path):
            heapq.heappush(ev, (fin, s, path, i + 1, fl))
    return drops


tot = Counter()
N = 20 if skew else 1
for s in range(N):
    for p in list(up.values()) + list(down.values()) + list(hostp.values()):
        p.q.clear()
        p.last = 0.0
    tot += run(s)
print(
    f"m={m} win={win} skew={skew * 1e3:.1f}ms: drops per run host {tot['host'] / N:.1f} backbone {tot['backbone'] / N:.1f}"
)
