import sys, statistics as st
sys.argv = sys.argv[:2]
exec(open("summ.py").read().split("for tag in")[0])
rs = rows(load(sys.argv[1]))
kinds = sorted({r[1] for r in rs})
print("draw".ljust(16), " ".join(k[:12].rjust(12) for k in kinds))
for d in sorted({r[0] for r in rs}):
    cells = []
    for k in kinds:
        xs = [r[4]/r[3]-1 for r in rs if r[0]==d and r[1]==k]
        lim = 0.15 if k=="forced" else 0.10
        cells.append((f"{st.median(xs):+.0%} {sum(abs(x)<=lim for x in xs)}/{len(xs)}" if xs else "-").rjust(12))
    print(d.ljust(16), " ".join(cells))
