"""tcpflow's error on the random patterns of scored draws, by the pattern's shape: an
exchanging pair or not, the most senders into one node, the most receivers of one node,
and whether some node both sends and receives (duplex):

    python random_classes.py OUT    # exp.py's OUT/<draw>.json, or a study's OUT/<draw>/score.json
"""

import collections
import glob
import json
import os
import re
import statistics
import sys


def shape(goal: str) -> tuple:
    sends, rank = set(), None
    with open(goal) as fh:
        for line in fh:
            m = re.match(r"rank (\d+)", line)
            if m:
                rank = int(m.group(1))
            m = re.search(r"send (\d+)b to (\d+)", line)
            if m:
                sends.add((rank, int(m.group(2))))
    into = collections.Counter(b for _, b in sends)
    out = collections.Counter(a for a, _ in sends)
    return (
        "exchange" if any((b, a) in sends for a, b in sends) else "-",
        f"fan-in {min(max(into.values()), 3)}",
        f"fan-out {min(max(out.values()), 3)}",
        "duplex" if any(into[x] and out[x] for x in into) else "-",
    )


def main(out: str) -> None:
    classes = collections.defaultdict(list)
    scored = sorted(glob.glob(os.path.join(out, "*.json")))
    scored = [(f, f[:-5]) for f in scored if os.path.isdir(f[:-5])] or [
        (f, os.path.dirname(f)) for f in sorted(glob.glob(os.path.join(out, "*", "score.json")))
    ]
    for f, work in scored:
        with open(f) as fh:
            d = json.load(fh)
        for s in d["schedules"]:
            if s["part"] != "random":
                continue
            goal = os.path.join(work, "schedules", s["file"])
            e = s["models"]["tcpflow"]["makespan_s"] / s["measured_s"] - 1
            classes[(s["label"][:2], *shape(goal))].append(100 * e)
    for k in sorted(classes):
        v = classes[k]
        print(
            " ".join(k),
            f"| {len(v)} schedules, median {statistics.median(v):+.0f}%, within 10% "
            f"{sum(abs(x) <= 10 for x in v)}, over {sum(x > 10 for x in v)}, "
            f"under {sum(x < -10 for x in v)}",
        )


if __name__ == "__main__":
    main(sys.argv[1])
