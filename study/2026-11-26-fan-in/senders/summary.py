"""The k-sender rounds of run.sh against tcpflow on ../two-rack-8-matrix/platform.yaml
(calibrated on the same spec an hour before): measured mean makespan (every repetition of
every mpirun of that round), the share of repetitions with a stall (more than 150 ms over
the round's fastest), and the prediction without fan-in, with the fan-in table weighted
(k - 1)/(K - 1) as tcpflow does, and with the full e_f at every k >= 2.

Usage (the venv active): python3 summary.py [senders.duckdb]"""

import copy
import os
import re
import statistics as st
import sys
from collections import defaultdict

import yaml

from commodel.db import ResultsDB
from commodel.platform import platform_from_dict
from commodel.prediction import predict
from commodel.schedules import read_goal

HERE = os.path.dirname(os.path.abspath(__file__))
db_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "senders.duckdb")
with open(os.path.join(HERE, "..", "two-rack-8-matrix", "platform.yaml")) as handle:
    DOC = yaml.safe_load(handle)


def platform(weight):
    d = copy.deepcopy(DOC)
    fan = d["tcp"]["efficiency"]["fanin"]
    if weight == "none":
        del d["tcp"]["efficiency"]["fanin"]
    elif weight == "full":
        fan["peers"] = 2  # (min(k, 2) - 1) / (2 - 1) = 1 for every k >= 2
    return platform_from_dict(d)


PLATFORMS = {w: platform(w) for w in ("none", "linear", "full")}
times = defaultdict(list)
with ResultsDB(db_path, read_only=True) as db:
    for c in db.campaigns():
        name = os.path.basename(c.options["schedule"])
        times[name] += [s["value_s"] for s in db.samples(c.id) if s["quantity"] == "makespan"]
print("round            reps   mean ms  stalls  predicted ms: no fan-in  linear in k  full e_f")
for name in sorted(times, key=lambda n: tuple(int(x) for x in re.findall(r"\d+", n))[::-1]):
    v = times[name]
    sched = read_goal(os.path.join(HERE, name))
    pred = {
        w: predict(sched, p, "tcpflow", record_messages=False).makespan_s
        for w, p in PLATFORMS.items()
    }
    stalls = sum(t > min(v) + 0.15 for t in v) / len(v)
    print(
        f"{name:16s} {len(v):4d} {st.mean(v) * 1e3:9.2f} {stalls:7.0%}"
        f"  {pred['none'] * 1e3:21.2f} {pred['linear'] * 1e3:12.2f} {pred['full'] * 1e3:9.2f}"
    )
