"""Timeouts per round kind and size of rounds.py's outputs: python tally.py DATA"""

import collections
import glob
import json
import os
import sys

for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    with open(path, encoding="utf-8") as fh:
        rows = json.load(fh)
    agg: dict = collections.defaultdict(lambda: [0, 0])
    for r in rows:
        kind = "shift" if r["set"].startswith("shift") else r["set"]
        agg[kind, r["size"]][0] += r["timeouts"]
        agg[kind, r["size"]][1] += 1
    print(os.path.basename(path)[:-5])
    for kind in sorted({k for k, _ in agg}):
        sizes = sorted(m for k, m in agg if k == kind)
        print(
            f"  {kind:6}",
            " ".join(f"{m // 1024}K:{agg[kind, m][0]}/{agg[kind, m][1]}" for m in sizes),
        )
