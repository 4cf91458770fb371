"""Per connection of a sample.sh file: the congestion window (segments of 1448 bytes) ss saw."""

import collections
import re
import statistics as st
import sys

cw = collections.defaultdict(list)
peer = None
with open(sys.argv[1]) as handle:
    lines = handle.readlines()
for line in lines:
    if line.startswith("T "):
        continue
    m = re.match(r"\d+\s+\d+\s+(\S+):(\d+)\s+(\S+):(\d+)", line.strip())
    if m:
        peer = (m.group(1), m.group(3))
        continue
    c = re.search(r"\bcwnd:(\d+)", line)
    if c and peer and peer[0].startswith("198.18."):
        cw[peer].append(int(c.group(1)))
allv = [v for vs in cw.values() for v in vs]
print(
    f"{len(cw)} connections, {len(allv)} samples; cwnd segments: median {st.median(allv)}, p10 {sorted(allv)[len(allv) // 10]}, p90 {sorted(allv)[9 * len(allv) // 10]}, max {max(allv)}"
)
for p, vs in sorted(cw.items()):
    print(p, "median", st.median(vs), "min", min(vs), "max", max(vs), "n", len(vs))
