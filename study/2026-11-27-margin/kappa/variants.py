"""Variants of the advise --verify data sets: cpu.o_s and cpu.o_r raised by kappa/2 each.

Usage: python3 variants.py KAPPAS OUT (KAPPAS in us, comma-separated): OUT/k<kappa>-<P>/<set>/
holds the set's samples CSVs (links) and its platform.yaml with the raised overheads. The
directories hold no verify CSVs, so the spread and (b) differ a little from the originals'
(compare k0 with k0, not with ../margins)."""
import os, sys, glob, yaml
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
kaps = [float(x) for x in sys.argv[1].split(",")]  # us
OUT = sys.argv[2]
for d in sorted(glob.glob(f"{root}/*/*/")):
    if not glob.glob(d + "*-samples.csv") or not os.path.exists(d + "platform.yaml"):
        continue
    doc0 = yaml.safe_load(open(d + "platform.yaml"))
    P = doc0.get("nodes")
    if "cpu" not in doc0 or P not in (8, 16) or "efficiency" not in (doc0.get("tcp") or {}):
        continue
    name = d.rstrip("/").split("/")[-2] + "_" + d.rstrip("/").split("/")[-1]
    for k in kaps:
        doc = yaml.safe_load(open(d + "platform.yaml"))
        out = f"{OUT}/k{int(k)}-{P}/{name}"
        os.makedirs(out, exist_ok=True)
        for f in glob.glob(d + "*-samples.csv"):
            t = os.path.join(out, os.path.basename(f))
            if not os.path.exists(t):
                os.symlink(f, t)
        c = doc["cpu"]
        c["o_s"] = [v + k * 0.5e-6 for v in c["o_s"]]
        c["o_r"] = [v + k * 0.5e-6 for v in c["o_r"]]
        with open(os.path.join(out, "platform.yaml"), "w") as h:
            yaml.safe_dump(doc, h, sort_keys=False)
    print(name, P)
