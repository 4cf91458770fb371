"""Dev: refit each draw's platform from cal.duckdb with the checkout's code, score tcpflow
on the schedules and forced algorithms; write exp-<tag>/<draw>.json and print a summary."""
import glob, json, math, os, statistics as st, sys, time
from commodel.fit.assemble import fit_to_text
from commodel.platform import load_platform
from commodel.study import score, workload

tag = sys.argv[1]
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "exp-" + tag)
os.makedirs(out, exist_ok=True)
for draw in sys.argv[2:]:
    name = os.path.basename(draw.rstrip("/"))
    dst = os.path.join(out, name + ".json")
    if os.path.exists(dst):
        continue
    t0 = time.time()
    text = fit_to_text(os.path.join(draw, "cal.duckdb"), None, None, None)
    pf = os.path.join(out, name + ".yaml")
    open(pf, "w").write(text)
    plat = load_platform(pf)
    t1 = time.time()
    sch = score.score_schedules(draw, plat, ("tcpflow",), workload.FULL)
    forced = score.score_forced(draw, plat, ("tcpflow",), workload.FULL)
    json.dump({"schedules": sch, "forced": forced}, open(dst, "w"), indent=0)
    print(f"{name}: fit {t1 - t0:.0f} s, score {time.time() - t1:.0f} s", flush=True)
