"""The ``measure topology`` samples that ``fit`` leaves out since 5f0fac3, per draw with a
``cal.duckdb`` (a study's output, or ``../../2026-11-29-held-out-9/dev/rebuild.py``'s):
flows from a node to itself (a confirmation round of a group that lay across two groups of the other level) and
repetitions below half the least of the flows' median times:

    python glitches.py DRAWS
"""

import collections
import glob
import json
import os
import statistics
import sys

from commodel.db import ResultsDB


def main(draws: str) -> None:
    for d in sorted(glob.glob(os.path.join(draws, "*", ""))):
        if not os.path.exists(os.path.join(d, "cal.duckdb")):
            continue
        db = ResultsDB(os.path.join(d, "cal.duckdb"), read_only=True)
        camp = next(c for c in db.campaigns() if c.benchmark == "topology")
        rows = [s for s in db.samples(camp.id) if s["quantity"] == "flow"]
        db.close()
        reps = collections.defaultdict(list)
        for r in rows:
            extra = r["extra"] if isinstance(r["extra"], dict) else json.loads(r["extra"])
            if r["src"] != r["dst"]:
                reps[(r["pattern"], extra["round"], extra["flow"])].append(r["value_s"])
        floor = 0.5 * min(statistics.median(ts) for ts in reps.values())
        out = []
        for s in rows:
            extra = s["extra"] if isinstance(s["extra"], dict) else json.loads(s["extra"])
            if s["src"] == s["dst"]:
                why = "loopback"
            elif s["value_s"] < floor:
                why = "below half the least flow median"
            else:
                continue
            out.append(
                f"{s['pattern']} {extra['round']} flow {s['src']}->{s['dst']} rep "
                f"{s['repetition']}: {s['value_s'] * 1e3:.3f} ms ({why})"
            )
        if out:
            name = os.path.basename(d.rstrip(os.sep))
            print(f"{name} (least flow median {2 * floor * 1e3:.1f} ms, {len(rows)} samples)")
            for line in out:
                print("  " + line)


if __name__ == "__main__":
    main(sys.argv[1])
