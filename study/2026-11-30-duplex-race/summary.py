"""The tables of README.md from data/*.csv: python summary.py"""
import csv
import os
import statistics
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))


def rows(name):
    with open(os.path.join(HERE, "data", name)) as fh:
        return list(csv.DictReader(fh))


flows = defaultdict(list)
for r in rows("efficiency_flows.csv"):
    flows[(int(r["nodes"]), r["pattern"], int(r["size_bytes"]), int(r["src"]), int(r["dst"]))].append(float(r["seconds"]))
print("measure efficiency, per flow: median / max ms")
for key in sorted(flows):
    n, pattern, m, a, b = key
    if m == 262144:
        v = flows[key]
        print(f"  {n} nodes {pattern:8} {a}>{b}: {statistics.median(v) * 1e3:6.1f} / {max(v) * 1e3:6.1f}")
spans, ends = defaultdict(list), defaultdict(list)
for r in rows("pattern_runs.csv"):
    if r["quantity"] == "makespan":
        spans[r["schedule"]].append(float(r["seconds"]))
    else:
        ends[(r["schedule"], r["src"], r["dst"])].append(float(r["seconds"]))
print("measure pattern: makespan median / max ms; each flow's median")
for g, v in spans.items():
    per = " ".join(
        f"{a}>{b} {statistics.median(t) * 1e3:.1f}" for (s, a, b), t in sorted(ends.items()) if s == g
    )
    print(f"  {g:12} {statistics.median(v) * 1e3:6.1f} / {max(v) * 1e3:6.1f}   {per}")
