"""Offline: alltoall A/B (and random, forced) error of tcpflow's noise-free prediction
against the median of K runs with the platform's tcp.spread noise (seeds 1..K)."""
import glob, json, math, os, statistics as st, sys
import commodel
from commodel.platform import load_platform
from commodel.schedules import read_goal as read_schedule
from commodel.spread import sigma_of

K = 20
res = {"free": {}, "median": {}}
for d in sys.argv[1:]:
    for draw in sorted(glob.glob(os.path.join(d, "rs*"))):
        sc = json.load(open(os.path.join(draw, "score.json")))
        pf = os.path.join(draw, sc["platform"])
        if not os.path.exists(pf):
            pf = os.path.join(draw, "platform.yaml")
        plat = load_platform(pf)
        sigma = sigma_of(plat)
        for r in sc["schedules"]:
            goal = os.path.join(draw, "schedules", r["file"])
            sched = read_schedule(goal)
            free = commodel.predict(sched, plat, "tcpflow", record_messages=False).makespan_s
            runs = [commodel.predict(sched, plat, "tcpflow", record_messages=False,
                                     jitter={"sigma": sigma, "seed": k}).makespan_s
                    for k in range(1, K + 1)] if sigma else [free]
            kind = r["part"] if r["part"] != "alltoall" else "alltoall-" + r["label"][0]
            for name, p in (("free", free), ("median", st.median(runs))):
                res[name].setdefault(kind, []).append((r["size"], math.log(p / r["measured_s"])))
for name, parts in res.items():
    cells = []
    for kind, xs in sorted(parts.items()):
        w = sum(abs(math.exp(e) - 1) <= 0.10 for s, e in xs)
        cells.append(f"{kind}: median {math.exp(st.median([e for s, e in xs])) - 1:+.0%} within10 {w}/{len(xs)}")
    print(f"{name:7s} " + " | ".join(cells))

# forced algorithms: the advice's generator per (collective, algorithm), as study/score.py
from commodel.advise.advice import candidate_schedule, advise
fres = {"free": [], "median": []}
for d in sys.argv[1:]:
    for draw in sorted(glob.glob(os.path.join(d, "rs*"))):
        sc = json.load(open(os.path.join(draw, "score.json")))
        pf = os.path.join(draw, sc["platform"])
        if not os.path.exists(pf):
            pf = os.path.join(draw, "platform.yaml")
        plat = load_platform(pf)
        sigma = sigma_of(plat)
        gens = {}
        for coll in sorted({r["collective"] for r in sc["forced"]}):
            sizes = sorted({r["size"] for r in sc["forced"] if r["collective"] == coll})
            adv = advise(plat, coll, [plat.nodes], sizes, model="tcpflow", jobs=1)
            for pt in adv.points:
                for c in pt.candidates:
                    gens[(coll, c.number)] = c.generator
        for r in sc["forced"]:
            t = r["models"].get("tcpflow", {})
            if "makespan_s" not in t or not gens.get((r["collective"], r["algorithm"])):
                continue
            sched = candidate_schedule(r["collective"], r["algorithm"], gens[(r["collective"], r["algorithm"])], plat.nodes, r["size"])
            free = t["makespan_s"]
            runs = [commodel.predict(sched, plat, "tcpflow", record_messages=False,
                                     jitter={"sigma": sigma, "seed": k}).makespan_s
                    for k in range(1, K + 1)] if sigma else [free]
            for name, p in (("free", free), ("median", st.median(runs))):
                fres[name].append(math.log(p / r["measured_s"]))
for name, xs in fres.items():
    w = sum(abs(math.exp(e) - 1) <= 0.15 for e in xs)
    print(f"forced {name:7s} median {math.exp(st.median(xs)) - 1:+.0%} within15 {w}/{len(xs)}")
