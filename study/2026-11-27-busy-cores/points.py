"""Predicted over measured time of every forced algorithm at one size, under variants of
the cpu section: where each rule is off, and which way.

Usage: python3 points.py COLLECTIVE SIZE VARIANTS_DIR VARIANTS SET... (VARIANTS_DIR as
variants.py writes it; VARIANTS comma-separated, e.g. all-k0,busy-k0; SET a data set's
directory name there)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "scripts"))
from rescore_advice import load_csv, mean  # noqa: E402

from commodel.advise.advice import advise  # noqa: E402

coll, size, top = sys.argv[1], int(sys.argv[2]), sys.argv[3]
variants, sets = sys.argv[4].split(","), sys.argv[5:]
for s in sets:
    P = 16 if "16" in s.split("_")[-1] else 8
    rows = {}
    for v in variants:
        d = os.path.join(top, f"{v}-{P}", s)
        _, p, runs = load_csv(os.path.join(d, f"{coll}-samples.csv"), os.path.join(d, "platform.yaml"))
        adv = advise(os.path.join(d, "platform.yaml"), coll, [p], [size], min_gain=0.0)
        for c in adv.points[0].candidates:
            if c.time_s is None or c.number not in runs or size not in runs[c.number]:
                continue
            m = mean(runs[c.number][size])
            rows.setdefault((c.number, c.name), [m]).append(c.time_s / m)
    print(f"{s}: {coll} at {size} B, P = {P}: measured (us), predicted / measured with {', '.join(variants)}")
    for (n, name), (m, *r) in sorted(rows.items(), key=lambda kv: kv[1][0]):
        print(f"  {n:2d} {name:24s} {m * 1e6:9.1f}  " + "  ".join(f"{x:5.2f}" for x in r))
