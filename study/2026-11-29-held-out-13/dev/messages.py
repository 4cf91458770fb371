"""One schedule of a scored draw (``exp.py``'s OUT/DRAW with its refit platform, or a study's
draw with its platform): per message, tcpflow's end (the run without noise) and the
measured receive ends of its repetitions:

    python messages.py OUT/DRAW GOAL
"""

import collections
import os
import statistics
import sys

import duckdb

from commodel.platform import load_platform
from commodel.prediction import predict
from commodel.schedules import read_goal


def both(work: str, goal: str):
    """(the platform, tcpflow's prediction without noise, the measured rows (repetition,
    quantity, value_s, src, dst, extra) of the sends' and receives' ends and makespans)."""
    refit = os.path.join(work, "refit.yaml")
    plat = load_platform(refit if os.path.exists(refit) else os.path.join(work, "platform.yaml"))
    pred = predict(read_goal(os.path.join(work, "schedules", goal)), plat, model="tcpflow",
                   record_messages=True, noise=0)  # fmt: skip
    con = duckdb.connect(os.path.join(work, "pattern.duckdb"), read_only=True)
    rows = con.execute(
        "SELECT repetition, quantity, value_s, src, dst, extra FROM samples WHERE pattern = ? "
        "AND quantity IN ('recv_end', 'send_end', 'makespan')",
        [goal],
    ).fetchall()
    return plat, pred, rows


def main(work: str, goal: str) -> None:
    _, pred, rows = both(work, goal)
    measured, spans = collections.defaultdict(list), []
    for _, q, v, s, d, _ in rows:
        if q != "send_end":
            (spans if q == "makespan" else measured[(s, d)]).append(v)
    print(f"makespan: measured median {statistics.median(spans) * 1e3:.1f} ms, "
          f"tcpflow without noise {pred.makespan_s * 1e3:.1f} ms")  # fmt: skip
    for m in pred.messages:
        got = sorted(measured.get((m.src, m.dst), []))
        print(f"{m.src} -> {m.dst}: tcpflow {m.end_s * 1e3:.1f} ms, measured "
              + " ".join(f"{x * 1e3:.1f}" for x in got))  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
