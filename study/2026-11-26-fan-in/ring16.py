"""Ring and rabenseifner allreduce of 16 ranks on the final pass's two-rack-16 platform
(../2026-11-26-final/two-rack-16/platform.yaml), under tcpflow as calibrated, without its
cpu section, and without its efficiency tables: where the over-prediction of ring at
16-256 KiB comes from. The measured means (forced runs of that pass, its allreduce-samples.csv) are printed beside.

Usage (the venv active): python3 ring16.py"""

import copy
import csv
import os
import statistics
from collections import defaultdict

import yaml

from commodel.advise.verify import run_samples
from commodel.platform import platform_from_dict
from commodel.prediction import predict
from commodel.schedules import collective

HERE = os.path.dirname(os.path.abspath(__file__))
FINAL = os.path.join(HERE, "..", "2026-11-26-final", "two-rack-16")
NUMBER = {"ring": 4, "rabenseifner": 6}  # Open MPI's allreduce algorithm numbers


def measured_ms(alg, m):
    """The forced runs' mean in that pass: the mean of the per-mpirun (per-round) means."""
    runs = defaultdict(list)
    with open(os.path.join(FINAL, "allreduce-samples.csv"), newline="") as handle:
        for r in csv.DictReader(handle):
            forced = r["rules"] == "0" and not r["splits"]
            if forced and r["algorithm"] == str(NUMBER[alg]) and int(r["size"]) == m:
                runs[r["round"]].append(float(r["value_s"]))
    return statistics.mean(run_samples(list(runs.values()))) * 1e3


with open(os.path.join(FINAL, "platform.yaml")) as handle:
    DOC = yaml.safe_load(handle)
print("algorithm      size     measured  as calibrated  no cpu  no efficiency (ms)")
variants = {}
for v in ("as is", "no cpu", "no eff"):
    d = copy.deepcopy(DOC)
    if v == "no cpu":
        del d["cpu"]
    if v == "no eff":
        del d["tcp"]["efficiency"]
    variants[v] = platform_from_dict(d)
for alg in NUMBER:
    for m in (16384, 65536, 262144):
        t = [
            predict(
                collective(f"allreduce-{alg}", 16, m), p, "tcpflow", record_messages=False
            ).makespan_s
            * 1e3
            for p in variants.values()
        ]
        print(
            f"{alg:13s} {m // 1024:4d} KiB {measured_ms(alg, m):9.2f} {t[0]:14.2f} "
            f"{t[1]:7.2f} {t[2]:14.2f}"
        )
