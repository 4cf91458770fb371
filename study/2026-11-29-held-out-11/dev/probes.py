"""Each round of a ports campaign, per probe and size: its time and the timeouts its
hosts counted:

    python probes.py DRAW/cal.duckdb
"""

import json
import sys
from collections import defaultdict

from commodel.db import ResultsDB


def main(path: str) -> None:
    db = ResultsDB(path, read_only=True)
    for camp in db.campaigns():
        if camp.benchmark != "ports":
            continue
        counts: dict[tuple[str, int], list] = defaultdict(list)
        for s in db.samples(camp.id):
            if s["quantity"] != "burst":
                continue
            extra = s["extra"] if isinstance(s["extra"], dict) else json.loads(s["extra"] or "{}")
            counts[(s["pattern"], int(s["size_bytes"]))].append(
                f"{s['value_s'] * 1e3:.0f} ms/{extra.get('timeouts')}"
            )
        for (probe, m), got in sorted(counts.items()):
            print(f"campaign {camp.id} {probe} {m} B: {', '.join(got)}")


if __name__ == "__main__":
    main(sys.argv[1])
