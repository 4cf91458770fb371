"""Each calibration of run.sh scored against the measurements of ../2026-11-26-final (same
cluster spec, same engine): the advice (--min-gain 20%/5%) of alltoall, bcast, allgather
and allreduce at 1 KiB..1 MiB, with the forced run of the algorithm picked (or the default
run where the default is kept) looked up among that pass's samples, as
scripts/rescore_advice.py does. Prints per calibration a few fitted parameters, the points
within 5% of the measured best, the points where (a) or (b) fails, and the picks that
differ from those of the pass's own calibration.

Usage (the venv active): python3 spread.py [P ...]   (default: 8 16)"""

import glob
import os
import subprocess
import sys

import yaml

from commodel.advise.advice import MinGain, advise

HERE = os.path.dirname(os.path.abspath(__file__))
FINAL = os.path.join(HERE, "..", "2026-11-26-final")
RESCORE = os.path.join(HERE, "..", "..", "..", "scripts", "rescore_advice.py")
COLLS = ("alltoall", "bcast", "allgather", "allreduce")
SIZES = [1024 << i for i in range(11)]
GAIN = MinGain(0.2, 0.05)


def params(path):
    """A few fitted numbers: PLogP's L and g(1 B), TCP's exchange efficiency at 4 and 64 KiB."""
    with open(path) as handle:
        p = yaml.safe_load(handle)
    pl, eff = p["plogp"], p["tcp"]["efficiency"]
    g1 = pl["g"][pl["sizes"].index(1)]
    ex = dict(zip(eff["sizes"], eff["exchange"]))
    return f"L {pl['L'] * 1e6:.1f} us, g(1) {g1 * 1e6:.1f} us, e_x(4K) {ex[4096]:.2f}, e_x(64K) {ex[65536]:.2f}"


def score(platform, P):
    """{collective: (within, points, (a) fails, (b) fails)} from rescore_advice's table."""
    csvs = [os.path.join(FINAL, f"two-rack-{P}", f"{c}-samples.csv") for c in COLLS]
    out = subprocess.run(
        [sys.executable, RESCORE, "--platform", platform, "--min-gain", "0.2/0.05", *csvs],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    res = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 9 and cells[4].startswith("20% below"):
            within, points = cells[9].split("/")
            res[cells[1]] = (int(within), int(points), cells[7], cells[8])
    return res


def picks(platform, P):
    return {
        (c, pt.size): pt.choice(GAIN).number
        for c in COLLS
        for pt in advise(platform, c, [P], SIZES, min_gain=0.0).points
    }


def main():
    for P in [int(x) for x in sys.argv[1:]] or [8, 16]:
        own = os.path.join(FINAL, f"two-rack-{P}", "platform.yaml")
        cals = [("the pass's own", own)] + [
            (f"calibration {os.path.basename(f)[9:-5]}", f)
            for f in sorted(glob.glob(os.path.join(HERE, f"two-rack-{P}", "platform-*.yaml")))
        ]
        ref = picks(own, P)
        print(f"two-rack-{P}, scored against ../2026-11-26-final/two-rack-{P} (44 points)\n")
        for label, path in cals:
            s = score(path, P)
            mine = picks(path, P)
            moved = [k for k in ref if mine[k] != ref[k]]
            within = sum(v[0] for v in s.values())
            print(f"{label}: {params(path)}")
            print(
                f"  within 5% of the best: {within}/44 ("
                + ", ".join(f"{c} {s[c][0]}/{s[c][1]}" for c in COLLS if c in s)
                + ")"
            )
            for c in COLLS:
                if c in s and (s[c][2] != "met" or not s[c][3].startswith("met")):
                    print(f"  {c}: (a) {s[c][2]}; (b) {s[c][3]}")
            print(
                f"  picks moved from the pass's calibration: {len(moved)}"
                + (
                    ""
                    if not moved
                    else ": "
                    + ", ".join(f"{c} {m // 1024}K {ref[(c, m)]}->{mine[(c, m)]}" for c, m in moved)
                )
            )
        print()


if __name__ == "__main__":
    main()
