"""Per size: the median step of measure wire's rings ((t(100) - t(20)) / 80, the slowest
node rank) [min-max over the repetitions], in us.  Usage: python3 steps.py DB..."""
import duckdb, sys, collections, statistics
for f in sys.argv[1:]:
    c=duckdb.connect(f, read_only=True)
    rows=c.execute("select size_bytes,n_msgs,repetition,max(value_s) from samples where pattern='ring' and quantity='round' group by all").fetchall()
    d={}
    for m,k,r,v in rows: d[(m,r,k)]=v
    out=collections.defaultdict(list)
    for (m,r,k),v in d.items():
        if k==100 and (m,r,20) in d: out[m].append((v-d[(m,r,20)])/80*1e6)
    print(f, ' '.join(f"{m}:{statistics.median(v):.1f}[{min(v):.0f}-{max(v):.0f}]" for m,v in sorted(out.items())))
