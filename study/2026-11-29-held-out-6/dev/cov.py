import os, sys, statistics as st
exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../2026-11-29-held-out-5/dev/summ.py")).read().split("for tag in")[0])
for tag in sys.argv[1:]:
    rs = rows(load(tag))
    by = {}
    for r in rs:
        if r[7] is None: continue
        by.setdefault(r[0], []).append(r[7] <= r[3] <= r[8])
    tot = sum(sum(v) for v in by.values()); n = sum(len(v) for v in by.values())
    per = [sum(v)/len(v) for v in by.values()]
    inr = sum(0.7 <= p <= 0.9 for p in per)
    print(f"{tag}: coverage {tot}/{n} = {tot/n:.0%}; draws in 70-90%: {inr}/{len(per)}; per draw " + " ".join(f"{d[2:]}:{sum(v)/len(v):.0%}" for d, v in sorted(by.items())))
    ok = {d: v for d, v in by.items() if not d.startswith("rs20261128x")}
    t = sum(sum(v) for v in ok.values()); n = sum(len(v) for v in ok.values())
    print(f"   with check ({len(ok)} draws): {t}/{n} = {t/n:.0%}")
