"""The fan-in table of this directory's two-rack-8 calibration grafted onto the five
calibrations of ../2026-11-26-calibration-spread (the final pass's own and four more, none
of which measured all-to-all rounds): the alltoall picks from 32 KiB and their score
against the final pass's measurements, without and with the table. No MPI is run.

Usage (the venv active): python3 graft.py"""

import copy
import glob
import os
import subprocess
import sys
import tempfile

import yaml

from commodel.advise.advice import MinGain, advise
from commodel.platform import platform_from_dict

HERE = os.path.dirname(os.path.abspath(__file__))
FINAL = os.path.join(HERE, "..", "2026-11-26-final", "two-rack-8")
SPREAD = os.path.join(HERE, "..", "2026-11-26-calibration-spread", "two-rack-8")
RESCORE = os.path.join(HERE, "..", "..", "..", "scripts", "rescore_advice.py")
SIZES = [32768 << i for i in range(6)]
with open(os.path.join(HERE, "two-rack-8", "platform.yaml")) as handle:
    FANIN = yaml.safe_load(handle)["tcp"]["efficiency"]["fanin"]


def score(doc):
    """alltoall's row of rescore_advice (--min-gain 20%/5%) against the final pass."""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        yaml.safe_dump(doc, f)
    out = subprocess.run(
        [sys.executable, RESCORE, "--platform", f.name, "--min-gain", "0.2/0.05",
         os.path.join(FINAL, "alltoall-samples.csv")],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    os.unlink(f.name)
    for line in out.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 9 and cells[4].startswith("20% below"):
            return f"(a) {cells[7]}; (b) {cells[8]}; (c) {cells[9]}"
    return "?"


cals = [os.path.join(FINAL, "platform.yaml")] + sorted(glob.glob(os.path.join(SPREAD, "platform-*.yaml")))
for path in cals:
    with open(path) as handle:
        doc = yaml.safe_load(handle)
    name = os.path.relpath(path, os.path.join(HERE, ".."))
    ex = dict(zip(doc["tcp"]["efficiency"]["sizes"], doc["tcp"]["efficiency"]["exchange"]))
    print(f"{name}: e_x(64K) {ex[65536]:.2f}")
    for label, fan in (("without fan-in", None), ("with fan-in", FANIN)):
        d = copy.deepcopy(doc)
        if fan:
            d["tcp"]["efficiency"]["fanin"] = fan
        adv = advise(platform_from_dict(copy.deepcopy(d)), "alltoall", [8], SIZES)
        picks = " ".join(
            f"{pt.size // 1024}K {pt.choice(MinGain(0.2, 0.05)).number}" for pt in adv.points
        )
        print(f"  {label:15s} picks {picks}; 1 KiB..1 MiB scored: {score(d)}")
