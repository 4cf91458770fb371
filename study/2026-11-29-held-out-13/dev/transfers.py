"""Per message of one schedule of a scored draw (``exp.py``'s OUT/DRAW), its transfer time
(its receive's end less the later of its send's and its receive's posting), measured in
each repetition, over tcpflow's (its end less its start, the run without noise): the
quantiles of that ratio over every message and repetition, and the spread of its log:

    python transfers.py OUT/DRAW alltoall-a-64KiB.goal
"""

import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from messages import both  # noqa: E402


def main(work: str, goal: str) -> None:
    _, pred, rows = both(work, goal)
    model = {(m.src, m.dst): m.end_s - m.start_s for m in pred.messages}
    posted, ends = {}, {}
    for r, q, v, s, d, extra in rows:
        if q == "makespan":
            continue
        start = json.loads(extra)["start_s"]
        if q == "send_end":
            posted[(r, s, d)] = max(posted.get((r, s, d), 0.0), start)
        else:
            posted[(r, s, d)] = max(posted.get((r, s, d), 0.0), start)
            ends[(r, s, d)] = v
    ratios = sorted(
        (ends[k] - posted[k]) / model[k[1:]] for k in ends if k[1:] in model and model[k[1:]] > 0
    )
    q = {p: ratios[int(p * (len(ratios) - 1))] for p in (0.1, 0.25, 0.5, 0.75, 0.9, 0.95)}
    logs = [math.log(x) for x in ratios if x > 0]
    print(
        f"{len(ratios)} transfers, measured / tcpflow: "
        + ", ".join(f"p{round(p * 100)} {v:.2f}" for p, v in q.items())
        + f"; sd of the log {statistics.pstdev(logs):.3f}"
    )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
