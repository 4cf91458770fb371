"""Per file of entry.py: the spread of the ranks' entry times (max - min), the time from the
first entry to the last exit, and the repetitions slower than 150 ms (an RTO_min)."""

import json
import statistics as st
import sys

for f in sys.argv[1:]:
    with open(f) as handle:
        d = json.load(handle)
    every = d["recs"]
    reps = len(every[0])
    spreads, durs, late = [], [], []
    for i in range(reps):
        t0 = [every[r][i][0] for r in range(d["ranks"])]
        t1 = [every[r][i][1] for r in range(d["ranks"])]
        spreads.append((max(t0) - min(t0)) * 1e3)
        durs.append((max(t1) - min(t0)) * 1e3)
    q = sorted(spreads)
    print(
        f"{f}: entry spread ms median {st.median(spreads):.3f} p90 {q[int(0.9 * len(q))]:.3f} max {max(spreads):.3f};"
        f" time ms median {st.median(durs):.2f} mean {st.mean(durs):.2f} max {max(durs):.1f}; slow>150ms {sum(x > 150 for x in durs)}/{reps}"
    )
