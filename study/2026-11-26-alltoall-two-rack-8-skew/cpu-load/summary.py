"""Per run of run.sh: the median and mean time of the 40 calls (first entry to last exit),
the calls over 150 ms (an RTO_min and more), and the median spread of the exits."""

import json
import statistics as st

for f in ["quiet1", "quiet2", "busy1", "busy2", "quiet3"]:
    with open(f"{f}.json") as handle:
        d = json.load(handle)
    e, P = d["recs"], d["ranks"]
    n = len(e[0])
    span = [max(e[r][i][1] for r in range(P)) - min(e[r][i][0] for r in range(P)) for i in range(n)]
    ex = [
        sorted(e[r][i][1] for r in range(P))[-2] - min(e[r][i][1] for r in range(P))
        for i in range(n)
    ]
    print(
        f"{f}: median {1e3 * st.median(span):.1f} ms, mean {1e3 * st.mean(span):.1f} ms, "
        f"over 150 ms {sum(s > 0.15 for s in span)}/{n}, exits spread (second last - first) "
        f"median {1e3 * st.median(ex):.1f} ms"
    )
