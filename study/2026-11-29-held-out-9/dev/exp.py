"""Refit and score rebuilt draws with the code on PYTHONPATH, two at a time:

python exp.py DRAWS OUT [DRAW ...]    # OUT/<draw>.json (score.json), OUT/<draw>/refit.yaml
"""

import glob
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor

LINKS = (
    "cal.duckdb",
    "pattern.duckdb",
    "forced.duckdb",
    "counters.json",
    "measured.json",
    "spec.yaml",
)


def one(args):
    src, out = args
    name = os.path.basename(src)
    work = os.path.join(out, name)
    os.makedirs(work, exist_ok=True)
    for f in LINKS:
        if not os.path.exists(os.path.join(work, f)):
            os.symlink(os.path.join(src, f), os.path.join(work, f))
    from commodel.study.score import score_spec

    try:
        result = score_spec(work, refit=True)
    except Exception as exc:  # noqa: BLE001 - reported per draw
        return name, f"failed: {exc}"
    with open(os.path.join(out, name + ".json"), "w") as fh:
        json.dump(result, fh)
    return name, "ok"


if __name__ == "__main__":
    draws, out, picked = sys.argv[1], sys.argv[2], sys.argv[3:]
    todo = [os.path.join(draws, d) for d in picked] or sorted(glob.glob(os.path.join(draws, "*")))
    with ProcessPoolExecutor(2) as ex:
        for name, status in ex.map(one, [(d, out) for d in todo]):
            print(name, status, flush=True)
