"""Per file of entry.py: the entry spread, the makespan (last exit - first entry) and what
measure collective reports (the slowest rank's exit - its own entry), medians in ms."""

import json
import statistics as st
import sys

for f in sys.argv[1:]:
    with open(f) as handle:
        d = json.load(handle)
    e, P = d["recs"], d["ranks"]
    n = len(e[0])
    spread = [
        max(e[r][i][0] for r in range(P)) - min(e[r][i][0] for r in range(P)) for i in range(n)
    ]
    span = [max(e[r][i][1] for r in range(P)) - min(e[r][i][0] for r in range(P)) for i in range(n)]
    own = [max(e[r][i][1] - e[r][i][0] for r in range(P)) for i in range(n)]
    print(
        f"{f}: entry spread {1e3 * st.median(spread):.2f} ms (max {1e3 * max(spread):.2f}); "
        f"makespan {1e3 * st.median(span):.2f} ms; slowest own time {1e3 * st.median(own):.2f} "
        f"ms (mean {1e3 * st.mean(own):.2f})"
    )
