"""Per verify data set of two-rack-8 and two-rack-16 since 2026-11-26 (and the margin pass):
when its calibration started, PLogP's o_s(0) and o_r(0), the default's mean time of
allreduce at 1, 2 and 4 KiB, and at 1 KiB the forced recursive doubling (3),
nonoverlapping (2) and rabenseifner (6) over the default, with the measured best.
From this directory: python3 machines.py"""
import os
import re
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "scripts"))
from rescore_advice import load_csv, mean  # noqa: E402

RESULTS = os.path.join(HERE, "..")
MARGINS = os.path.join(RESULTS, "2026-11-27-margin", "margins")
print("| data set | calibration started | o_s(0), o_r(0) (us) | default 1 / 2 / 4 KiB (us) | 3 / 2 / 6 at 1 KiB | best |")
print("|---|---|---|---|---|---:|")
for P in (8, 16):
    sets = open(os.path.join(MARGINS, f"sets-{P}.txt")).read().split() + [f"2026-11-27-margin/two-rack-{P}"]
    rows = []
    for s in sets:
        d = os.path.join(RESULTS, s)
        if not os.path.exists(os.path.join(d, "allreduce-samples.csv")):
            continue  # an alltoall-only data set
        plat = os.path.join(d, "platform.yaml")
        started = re.search(r"started (2026-\S+ \S+) UTC", open(plat).read())
        pl = yaml.safe_load(open(plat))["plogp"]
        _, _, runs = load_csv(os.path.join(d, "allreduce-samples.csv"), plat)
        dflt = runs["default"]
        r = {a: mean(runs[a][1024]) / mean(dflt[1024]) for a in (2, 3, 6) if 1024 in runs.get(a, {})}
        best = min((a for a in runs if isinstance(a, int) and 1024 in runs[a]), key=lambda a: mean(runs[a][1024]))
        rows.append((started.group(1) if started else "?", s, pl, dflt, r, best))
    for when, s, pl, dflt, r, best in sorted(rows):
        print(
            f"| {s} | {when} | {pl['o_s'][0] * 1e6:.1f}, {pl['o_r'][0] * 1e6:.1f} | "
            + " / ".join(f"{mean(dflt[m]) * 1e6:.0f}" for m in (1024, 2048, 4096))
            + f" | {r.get(3, 0):.2f} / {r.get(2, 0):.2f} / {r.get(6, 0):.2f} | {best} |"
        )
