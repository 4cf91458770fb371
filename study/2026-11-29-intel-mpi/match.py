"""Match measured per-peer TCP bytes to commodel generators' traffic (bytes per src->dst):
a generator matches when every pair's measured bytes are within [want, want + 200 B a message]."""
import json, sys
import commodel
from commodel.measure.traffic import schedule_traffic
gens = [g for g, _ in commodel.collective_names() if g.split("-")[0] in ("allreduce", "bcast", "allgather", "alltoall")]
cache = {}
def traffic(g, p, m):
    k = (g, p, m)
    if k not in cache:
        try:
            cache[k] = schedule_traffic(commodel.collective(g, p, m))
        except Exception as e:
            cache[k] = None
    return cache[k]
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
for r in rows:
    p, m, coll, got = r["p"], r["size"], r["coll"], r["bytes"]
    ok = []
    for g in gens:
        if not g.startswith(coll + "-"):
            continue
        t = traffic(g, p, m)
        if t is None:
            continue
        good = True
        for s in range(p):
            for d in range(p):
                if s == d: continue
                n, b = t[s][d]
                if not (b <= got[s][d] <= b + 200 * max(n, 1) + 200):
                    good = False
        if good:
            ok.append(g.removeprefix(coll + "-"))
    mat = " | ".join(",".join(f"{x/1024:.0f}" if x > 400 else "." for x in row) for row in got)
    print(f"{r['tag']:10s} {coll:9s} {m:7d}  {mat:60s} -> {' '.join(ok) or '?'}")
