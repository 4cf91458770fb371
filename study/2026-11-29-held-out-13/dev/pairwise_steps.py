"""The pairwise alltoall of a scored draw (``exp.py``'s OUT/DRAW), step by step: per step k
(rank i receives from i - k), the latest end over the ranks, tcpflow's (the run without
noise) against the measured (median over repetitions):

    python pairwise_steps.py OUT/DRAW alltoall-a-64KiB.goal
"""

import collections
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from messages import both  # noqa: E402


def main(work: str, goal: str) -> None:
    plat, pred, rows = both(work, goal)
    n = plat.nodes
    model = {(m.src, m.dst): m.end_s for m in pred.messages}
    by_rep = collections.defaultdict(dict)
    for r, q, v, s, d, _ in rows:
        if q == "recv_end":
            by_rep[r][(s, d)] = v
    print("step  tcpflow end (step)   measured end (step)   measured / tcpflow, the step")
    last_p = last_m = 0.0
    for k in range(1, n):
        p = max(model[((i - k) % n, i)] for i in range(n))
        m = statistics.median(
            max(rep[((i - k) % n, i)] for i in range(n)) for rep in by_rep.values()
        )
        print(f"{k:4d}  {p * 1e3:7.1f} ({(p - last_p) * 1e3:5.1f})     {m * 1e3:7.1f} "
              f"({(m - last_m) * 1e3:5.1f})      {(m - last_m) / (p - last_p):.2f}")  # fmt: skip
        last_p, last_m = p, m


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
