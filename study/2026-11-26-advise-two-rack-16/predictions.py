"""tcpflow's predictions of the four alltoall algorithms on this platform, with the tail
drops (tcp.rto_rule buffer, as calibrated) and without them (rto_rule plogpt), over the
means of the forced runs in alltoall-samples.csv, on as many ranks as the platform has nodes.
Usage, in a directory holding platform.yaml and alltoall-samples.csv:
python3 predictions.py (here), python3 ../2026-11-26-advise-two-rack-16/predictions.py"""

import copy
import csv
import statistics

import yaml

from commodel.advise.advice import advise
from commodel.platform import platform_from_dict

runs: dict = {}
for r in csv.DictReader(open("alltoall-samples.csv")):
    if r["rules"] == "0" and r["algorithm"] != "0":
        runs.setdefault(int(r["algorithm"]), {}).setdefault(int(r["size"]), []).append(
            float(r["value_s"])
        )
meas = {a: {m: statistics.mean(v) for m, v in d.items()} for a, d in runs.items()}
doc = yaml.safe_load(open("platform.yaml"))
off = copy.deepcopy(doc)
off["tcp"]["rto_rule"] = "plogpt"
sizes = sorted(meas[1])
pred = {}
for name, d in (("with", doc), ("without", off)):
    adv = advise(platform_from_dict(d), "alltoall", [d["nodes"]], sizes, jobs=1)
    pred[name] = {pt.size: {c.number: c.time_s for c in pt.candidates if c.time_s} for pt in adv.points}
print("measured mean; predicted / measured with tail drops / without them\n")
print("| size | 1 linear | 4 linear_sync | 2 pairwise | 3 modified_bruck |")
print("|---:|---|---|---|---|")
for m in sizes:
    cells = [
        f"{meas[a][m] * 1e3:.1f} ms; {pred['with'][m][a] / meas[a][m]:.2f} / "
        f"{pred['without'][m][a] / meas[a][m]:.2f}"
        for a in (1, 4, 2, 3)
    ]
    print(f"| {m // 1024} KiB | " + " | ".join(cells) + " |")
