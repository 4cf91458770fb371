"""Would averaging calibrations help? Each set of platforms (the final pass's and run.sh's, all
of them and every pair) averaged into one: PLogP's o_s, o_r, g (and the `cpu` section's o_s,
o_r, and plogp.bidirectional.g) interpolated linearly onto the union of their size grids and
averaged, L, b(h), d(h) and the efficiencies averaged (the same sizes in every platform);
PLogP's escalation lists dropped. Each average is scored as spread.py scores a calibration.
Prints a table (pooled.txt). Usage (the venv active): python3 pool.py > pooled.txt"""

import copy
import glob
import os
import sys
import tempfile

import numpy as np
import spread
import yaml


def interp(sizes, vals, grid):
    return np.interp(grid, sizes, vals)


def average(ps):
    out = copy.deepcopy(ps[0])
    pl = out["plogp"]
    grid = sorted(set().union(*[p["plogp"]["sizes"] for p in ps]))
    pl["sizes"] = grid
    pl["L"] = float(np.mean([p["plogp"]["L"] for p in ps]))
    for k in ("o_s", "o_r", "g"):
        rows = [interp(p["plogp"]["sizes"], p["plogp"][k], grid) for p in ps]
        pl[k] = [float(x) for x in np.mean(rows, axis=0)]
    pl.pop("escalation", None)
    if all("bidirectional" in p["plogp"] for p in ps):
        rows = [interp(p["plogp"]["sizes"], p["plogp"]["bidirectional"]["g"], grid) for p in ps]
        pl["bidirectional"] = {"g": [float(x) for x in np.mean(rows, axis=0)]}
    if "cpu" in out:
        cgrid = sorted(set().union(*[p["cpu"]["sizes"] for p in ps]))
        out["cpu"]["sizes"] = cgrid
        for k in ("o_s", "o_r"):
            rows = [interp(p["cpu"]["sizes"], p["cpu"][k], cgrid) for p in ps]
            out["cpu"][k] = [float(x) for x in np.mean(rows, axis=0)]
    for d in ("unidirectional", "bidirectional"):
        for k in ("b", "d"):
            out["network"][d][k] = [
                float(x) for x in np.mean([p["network"][d][k] for p in ps], axis=0)
            ]
    for k in ("exchange", "duplex"):
        rows = [p["tcp"]["efficiency"][k] for p in ps]
        out["tcp"]["efficiency"][k] = [float(x) for x in np.mean(rows, axis=0)]
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory() as tmp:
        for P in (8, 16):
            files = [os.path.join(spread.FINAL, f"two-rack-{P}", "platform.yaml")] + sorted(
                glob.glob(os.path.join(here, f"two-rack-{P}", "platform-*.yaml"))
            )
            ps = []
            for f in files:
                with open(f) as handle:
                    ps.append(yaml.safe_load(handle))
            n = len(ps)
            sets = [("all", list(range(n)))] + [
                (f"{i}+{j}", [i, j]) for i in range(n) for j in range(i + 1, n)
            ]
            print(f"two-rack-{P} (0: the pass's calibration, i: platform-i.yaml)")
            for label, ix in sets:
                path = os.path.join(tmp, f"p{P}-{label}.yaml")
                with open(path, "w") as handle:
                    yaml.safe_dump(average([ps[i] for i in ix]), handle)
                s = spread.score(path, P)
                within = sum(v[0] for v in s.values())
                short = "; ".join(f"{c} {v[3]}" for c, v in s.items() if not v[3].startswith("met"))
                print(f"  {label:>4}: within 5% {within}/44; (b) short: {short}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
