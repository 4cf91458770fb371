"""Variants of the advise --verify data sets of two-rack-8 and two-rack-16 (the 21 of
../2026-11-27-margin/margins/sets-*.txt): the cpu section's sharing set and cpu.o_s,
cpu.o_r raised by kappa/2 each.

Usage: python3 variants.py SHARINGS KAPPAS OUT (comma-separated; KAPPAS in us; a sharing is
`all`, `busy` or `busyW`, busy with idle ranks taking W of a core each):
OUT/<sharing>-k<kappa>-<P>/<set>/ holds links to the set's samples and verify CSVs and its
platform.yaml with the section changed."""
import glob
import os
import sys

import yaml

here = os.path.dirname(os.path.abspath(__file__))
results = os.path.join(here, "..")
sharings = sys.argv[1].split(",")
kaps = [float(x) for x in sys.argv[2].split(",")]
OUT = sys.argv[3]
for P in (8, 16):
    sets = open(os.path.join(results, "2026-11-27-margin", "margins", f"sets-{P}.txt")).read().split()
    for s in sets:
        d = os.path.join(results, s)
        name = s.replace("/", "_")
        for sh in sharings:
            for k in kaps:
                doc = yaml.safe_load(open(os.path.join(d, "platform.yaml")))
                out = f"{OUT}/{sh}-k{int(k)}-{P}/{name}"
                os.makedirs(out, exist_ok=True)
                for f in glob.glob(os.path.join(d, "*-samples.csv")) + glob.glob(
                    os.path.join(d, "*.verify.csv")
                ):
                    t = os.path.join(out, os.path.basename(f))
                    if not os.path.exists(t):
                        os.symlink(f, t)
                c = doc["cpu"]
                c["sharing"] = "all" if sh == "all" else "busy"
                if sh.startswith("busy") and sh != "busy":
                    c["idle"] = float(sh[4:])
                c["o_s"] = [v + k * 0.5e-6 for v in c["o_s"]]
                c["o_r"] = [v + k * 0.5e-6 for v in c["o_r"]]
                with open(os.path.join(out, "platform.yaml"), "w") as h:
                    yaml.safe_dump(doc, h, sort_keys=False)
