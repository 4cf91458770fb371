import glob, json, math, os, statistics as st, sys
def load(tag):
    d = {}
    for f in sorted(glob.glob(f"exp-{tag}/*.json")):
        d[os.path.basename(f)[:-5]] = json.load(open(f))
    return d
def rows(res):
    out = []
    for draw, r in res.items():
        for s in r["schedules"]:
            t = s["models"]["tcpflow"]
            if "makespan_s" not in t: continue
            kind = s["part"] if s["part"] != "alltoall" else "alltoall-" + s["label"][0]
            big = "L" if s["size"] >= 262144 else "S"
            if s["part"] == "alltoall": kind += big
            out.append((draw, kind, s["file"], s["measured_s"], t["makespan_s"], s.get("timeouts", 0), t.get("rto", 0), t.get("low_s"), t.get("high_s")))
        for f in r["forced"]:
            t = f["models"].get("tcpflow", {})
            if "makespan_s" not in t: continue
            out.append((draw, "forced", f"{f['collective']}-{f['algorithm']}-{f['size']}", f["measured_s"], t["makespan_s"], 0, 0, t.get("low_s"), t.get("high_s")))
    return out
for tag in sys.argv[1:]:
    rs = rows(load(tag))
    kinds = sorted({r[1] for r in rs})
    cells = []
    for k in kinds:
        xs = [r for r in rs if r[1] == k]
        lim = 0.15 if k == "forced" else 0.10
        w = sum(abs(r[4] / r[3] - 1) <= lim for r in xs)
        b20 = sum(abs(r[4] / r[3] - 1) > 0.2 for r in xs)
        med = st.median([r[4] / r[3] - 1 for r in xs])
        cells.append(f"{k} {w}/{len(xs)} med{med:+.0%} >20%:{b20}")
    print(tag, len(load(tag)), "draws |", " | ".join(cells))
