"""scripts/rescore_advice.py with a CPU-work bound on every prediction of a platform with a
`cpu` section: T' = max(T, W / C), W the sum over the schedule's messages of
c(m) = ALPHA_P (o_s(m) + o_r(m)) + C0, o_s and o_r the cpu section's (linearly
interpolated; past its last size, scaled by m), C its cores. Env: ALPHA8, ALPHA16 (the
multiplier at P = 8, 16; ALPHA otherwise, 1), C0 (us a message, 0). The arguments are
rescore_advice.py's."""
import bisect, os, sys, runpy
import commodel.prediction as pr
from commodel.platform import load_platform

orig = pr.predict
cache = {}

def c_of(plat, m):
    cpu = plat.sections.get("cpu")
    xs, os_, or_ = list(cpu.sizes), list(cpu.o_s), list(cpu.o_r)
    tot = [a + b for a, b in zip(os_, or_)]
    if m >= xs[-1]:
        return tot[-1] * m / xs[-1]
    i = bisect.bisect_right(xs, m) - 1
    if xs[i] == m or i + 1 >= len(xs):
        return tot[i]
    f = (m - xs[i]) / (xs[i + 1] - xs[i])
    return tot[i] + f * (tot[i + 1] - tot[i])

def patched(sched, plat, model=None, **kw):
    pred = orig(sched, plat, model=model, **kw)
    if isinstance(plat, str):
        plat = load_platform(plat)
    cpu = plat.sections.get("cpu")
    P = sched.num_ranks
    if cpu is None or P <= cpu.cores:
        return pred
    alpha = float(os.environ.get(f"ALPHA{P}", os.environ.get("ALPHA", "1")))
    c0 = float(os.environ.get("C0", "0")) * 1e-6
    w = 0.0
    for r in range(P):
        for op in sched.rank_ops(r):
            if op[0] == "send":
                w += alpha * c_of(plat, op[3]) + c0
    bound = w / cpu.cores
    if bound > pred.makespan_s:
        import dataclasses
        pred = dataclasses.replace(pred, makespan_s=bound)
    return pred

pr.predict = patched
sys.argv = ["rescore"] + sys.argv[1:]
top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
runpy.run_path(os.path.join(top, "scripts", "rescore_advice.py"), run_name="__main__")
