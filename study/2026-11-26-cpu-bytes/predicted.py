"""Predicted / measured mean of every forced algorithm in the advise --verify data sets
given (directories holding platform.yaml with a cpu section and C-samples.csv), under the
platform's default model: the median |log(predicted / measured)| and the median ratio,
over all points, per size band, collective and data set. Writes predicted.csv.

Usage: python3 predicted.py DIR..."""

import copy
import csv
import glob
import math
import os
import statistics as st
import sys

import yaml

from commodel.advise.advice import advise
from commodel.advise.verify import run_samples
from commodel.platform import platform_from_dict


def measured(path):
    """{(algorithm, size): mean} of the forced runs, each run judged by its mpiruns' means."""
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    runs = {}
    for r in rows:
        if "run" in r:  # collective,ranks,run,size,value_s
            if r["run"] in ("default", "rules"):
                continue
            key, rnd = (int(r["run"]), int(r["size"])), "0"
        else:  # campaign,algorithm,rules,splits,round,size,value_s
            if r["rules"] == "1" or r["splits"] or r["algorithm"] == "0":
                continue
            key, rnd = (int(r["algorithm"]), int(r["size"])), r["round"]
        runs.setdefault(key, {}).setdefault(rnd, []).append(float(r["value_s"]))
    return {k: st.mean(run_samples(list(v.values()))) for k, v in runs.items()}


out = []
for d in sys.argv[1:]:
    with open(os.path.join(d, "platform.yaml")) as handle:
        doc = yaml.safe_load(handle)
    for f in sorted(glob.glob(os.path.join(d, "*-samples.csv"))):
        coll = os.path.basename(f).removesuffix("-samples.csv")
        if coll not in ("alltoall", "allgather", "allreduce", "bcast"):
            continue
        meas = measured(f)
        sizes = sorted({s for _, s in meas})
        adv = advise(platform_from_dict(copy.deepcopy(doc)), coll, [doc["nodes"]], sizes)
        pred = {(c.number, pt.size): c.time_s for pt in adv.points for c in pt.candidates}
        for key, m in sorted(meas.items()):
            if pred.get(key):
                out.append((os.path.basename(d.rstrip("/")), coll, *key, pred[key] / m))
with open("predicted.csv", "w", newline="") as handle:
    w = csv.writer(handle)
    w.writerow(["data_set", "collective", "algorithm", "size", "predicted_over_measured"])
    w.writerows(out)


def summary(sel, label):
    if sel:
        err = st.median(abs(math.log(x[-1])) for x in sel)
        print(f"{label:50s} n={len(sel):4d}  median |log(p/m)| {err:.3f}  "
              f"median p/m {st.median(x[-1] for x in sel):.2f}")


summary(out, "all")
for lo, hi in ((0, 4096), (4096, 32768), (32768, 131072), (131072, 1 << 30)):
    summary([x for x in out if lo <= x[3] < hi], f"sizes [{lo}, {hi}) B")
for coll in ("alltoall", "allgather", "allreduce", "bcast"):
    summary([x for x in out if x[1] == coll], coll)
for name in sorted({x[0] for x in out}):
    summary([x for x in out if x[0] == name], name)
