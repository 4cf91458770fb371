"""Dev: the targets' tallies (tcpflow) of two exp.py outputs over the draws both have."""
import glob, json, os, sys
from commodel.study.report import Scores, score
a, b = sys.argv[1], sys.argv[2]
names = sorted(set(os.path.basename(f) for f in glob.glob(os.path.join(b, "*.json"))))
tot = {a: Scores(), b: Scores()}
for n in names:
    row = []
    for d in (a, b):
        with open(os.path.join(d, n)) as fh:
            s = score(json.load(fh), "tcpflow")
        tot[d].merge(s)
        row.append(s)
    x, y = row
    if (x.alltoall.text(), x.random.text(), x.forced.text(), x.tp, x.fp, x.fn) != (y.alltoall.text(), y.random.text(), y.forced.text(), y.tp, y.fp, y.fn):
        print(f"{n[:-5]:34s} A2A {x.alltoall.text()}->{y.alltoall.text()} rnd {x.random.text()}->{y.random.text()} forced {x.forced.text()}->{y.forced.text()} TO {x.tp}/{x.fp}/{x.fn}->{y.tp}/{y.fp}/{y.fn}")
for d in (a, b):
    t = tot[d]
    print(f"{d}: alltoall {t.alltoall.text()} (20%: {t.alltoall_20.text()}) random {t.random.text()} forced {t.forced.text()} order {t.order.text()} intervals {t.coverage.text()} timeouts tp {t.tp} fp {t.fp} fn {t.fn}")
