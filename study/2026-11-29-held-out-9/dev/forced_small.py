"""Median tcpflow error of the forced runs at 2 KiB per shaping and algorithm:
python forced_small.py OUT DRAWS."""

import glob
import json
import os
import statistics
import sys
from collections import defaultdict

import yaml

out, draws = sys.argv[1], sys.argv[2]
errs = defaultdict(list)
for f in sorted(glob.glob(os.path.join(out, "*.json"))):
    name = os.path.basename(f)[:-5]
    with open(os.path.join(draws, name, "spec.yaml")) as fh:
        shaping = yaml.safe_load(fh).get("shaping", "tbf")
    with open(f) as fh:
        rows = json.load(fh)["forced"]
    for r in rows:
        if r["size"] == 2048 and r["models"]["tcpflow"].get("makespan_s"):
            e = r["models"]["tcpflow"]["makespan_s"] / r["measured_s"] - 1
            errs[(shaping, r["collective"], r["algorithm"])].append(e)
for k in sorted(errs):
    v = errs[k]
    within = sum(abs(x) <= 0.15 for x in v) / len(v)
    print(k, len(v), f"median {statistics.median(v):+.2f} within 15% {within:.2f}")
