"""A trial, not in the model: score the draws of an ``exp.py`` output (OUT_IN/<draw>/refit.yaml)
again with ``tcp.spread`` raised to the spread of the ring's flows at SIZE bytes (the
``efficiency`` campaign's rounds where every node sends and receives: the root mean square
of the log of each flow's time about its round's mean), into OUT (``summ.py OUT``):

    python ring_spread.py OUT_IN OUT 65536
"""

import glob
import json
import math
import os
import statistics
import sys
from concurrent.futures import ProcessPoolExecutor

import yaml

LINKS = ("cal.duckdb", "pattern.duckdb", "forced.duckdb", "counters.json", "measured.json",
         "spec.yaml")  # fmt: skip


def ring_spread(cal: str, size: int) -> float | None:
    from commodel.db import ResultsDB
    from commodel.fit.efficiency import flows_by_round

    db = ResultsDB(cal, read_only=True)
    devs = []
    for camp in (c for c in db.campaigns() if c.benchmark == "efficiency"):
        for (pattern, m), reps in flows_by_round(db.samples(camp.id)).items():
            if pattern != "duplex" or m != size:
                continue
            for flows in reps:
                if len(flows) > 1:
                    mean = statistics.mean(math.log(t) for t in flows.values())
                    devs += [math.log(t) - mean for t in flows.values()]
    db.close()
    return math.sqrt(statistics.mean(x * x for x in devs)) if devs else None


def one(args: tuple[str, str, int]) -> str:
    src, out, size = args
    from commodel.study.score import score_spec

    name = os.path.basename(src)
    work = os.path.join(out, name)
    os.makedirs(work, exist_ok=True)
    for f in LINKS:
        if not os.path.exists(os.path.join(work, f)):
            os.symlink(os.path.realpath(os.path.join(src, f)), os.path.join(work, f))
    with open(os.path.join(src, "refit.yaml")) as fh:
        doc = yaml.safe_load(fh)
    ring = ring_spread(os.path.join(work, "cal.duckdb"), size)
    before = doc.get("tcp", {}).get("spread")
    if ring is not None and "tcp" in doc:
        doc["tcp"]["spread"] = max(before or 0.0, round(ring, 4))
    with open(os.path.join(work, "platform.yaml"), "w") as fh:
        yaml.safe_dump(doc, fh)
    with open(os.path.join(out, name + ".json"), "w") as fh:
        json.dump(score_spec(work, refit=False), fh)
    return f"{name}: spread {before} -> {doc.get('tcp', {}).get('spread')}"


if __name__ == "__main__":
    src, out, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
    draws = sorted(d for d in glob.glob(os.path.join(src, "*")) if os.path.isdir(d))
    with ProcessPoolExecutor(2) as ex:
        for line in ex.map(one, [(d, out, size) for d in draws]):
            print(line, flush=True)
