"""Offline: which tcpflow rule drives alltoall A under and B over? Predict each draw's
alltoall A/B with its platform (refit.yaml if present) under variants of the tcp section."""
import copy, glob, json, math, os, statistics as st, sys
import yaml
import commodel
from commodel.platform import platform_from_dict

VARIANTS = {
    "as is": lambda t: None,
    "e_x=1": lambda t: t["efficiency"].update(exchange=[1.0] * len(t["efficiency"]["exchange"])),
    "e_d=1": lambda t: t["efficiency"].update(duplex=[1.0] * len(t["efficiency"]["duplex"])),
    "no fanin": lambda t: t["efficiency"].pop("fanin", None),
    "no fifo": lambda t: t.pop("fifo_limit", None),
    "no eff": lambda t: t.pop("efficiency", None),
}
dirs = sys.argv[1:]
res = {v: {"A": [], "B": []} for v in VARIANTS}
for d in dirs:
    for draw in sorted(glob.glob(os.path.join(d, "rs*"))):
        sc = json.load(open(os.path.join(draw, "score.json")))
        pf = os.path.join(draw, sc["platform"]) if not os.path.isabs(sc["platform"]) else sc["platform"]
        if not os.path.exists(pf):
            pf = os.path.join(draw, "platform.yaml")
        doc = yaml.safe_load(open(pf))
        for r in sc["schedules"]:
            if r["part"] != "alltoall":
                continue
            goal = os.path.join(draw, "schedules", r["file"])
            for v, f in VARIANTS.items():
                dd = copy.deepcopy(doc)
                if "tcp" in dd:
                    f(dd["tcp"])
                p = commodel.predict(goal, platform_from_dict(dd), "tcpflow").makespan_s
                res[v][r["label"][0].upper()].append((r["size"], math.log(p / r["measured_s"])))
for v, ab in res.items():
    out = []
    for k in "AB":
        small = [e for s, e in ab[k] if s < 256 * 1024]
        large = [e for s, e in ab[k] if s >= 256 * 1024]
        w10 = sum(abs(math.exp(e) - 1) <= 0.10 for s, e in ab[k])
        out.append(f"{k}: small {math.exp(st.median(small)) - 1:+.0%} large {math.exp(st.median(large)) - 1:+.0%} within10 {w10}/{len(ab[k])}")
    print(f"{v:10s} " + " | ".join(out))
