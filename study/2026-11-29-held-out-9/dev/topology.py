"""Each rebuilt draw's inferred topology beside its spec (read here for the evaluation only,
never by `fit`): per level the groups and the fitted uplink as a share of what its group
can send (``most_load`` x NIC), the crossbar's loss per flow and the repetitions' noise:

    python topology.py DRAWS
"""

import glob
import json
import math
import os
import sys

import yaml

from commodel.db import ResultsDB
from commodel.topology_inference import infer, loss, most_load, rounds_of


def noise(samples: list[dict]) -> float:
    """The pooled standard deviation of log(time) over each flow's repetitions."""
    reps: dict[tuple, list[float]] = {}
    for s in samples:
        if s["quantity"] != "rtt" and s["value_s"] > 0:
            ex = s["extra"] or {}
            key = (s["pattern"], ex.get("round"), ex.get("flow"))
            reps.setdefault(key, []).append(math.log(s["value_s"]))
    sq = dof = 0.0
    for v in reps.values():
        mean = sum(v) / len(v)
        sq += sum((x - mean) ** 2 for x in v)
        dof += len(v) - 1
    return math.sqrt(sq / dof) if dof else 0.0


for d in sorted(glob.glob(os.path.join(sys.argv[1], "*"))):
    with open(os.path.join(d, "spec.yaml")) as fh:
        spec = yaml.safe_load(fh)
    db = ResultsDB(os.path.join(d, "cal.duckdb"), read_only=True)
    camps = [c for c in db.campaigns() if c.benchmark == "topology"]
    if not camps:
        continue
    samples = db.samples(camps[-1].id)
    n = max(int(s["n_ranks"]) for s in samples)
    rounds = rounds_of(samples, n, int(samples[0]["size_bytes"]))
    found = infer(rounds)
    flows = sum(1 for t in rounds.solo if t > 0) + sum(len(r.flows) for r in rounds.rounds)
    levels = [
        (lv.groups, round(lv.capacity / (most_load(lv.groups, n) * found.nic), 2))
        for lv in found.levels
    ]
    topo = spec["topology"]
    print(
        json.dumps(
            {
                "draw": os.path.basename(d),
                "shaping": spec.get("shaping", "tbf"),
                "spec": topo.get("racks") or topo.get("type"),
                "backbone": topo.get("backbone_rate"),
                "nic": spec.get("nic_rate"),
                "levels": levels,
                "crossbar_loss_per_flow": round(loss(rounds, found.nic, []) / flows, 4),
                "noise": round(noise(samples), 3),
            }
        )
    )
