"""Per-degree counts of the random patterns of score JSONs: python d_by_degree.py OUT [OUT ...]"""
import json,glob,sys,collections
for d in sys.argv[1:]:
    by=collections.defaultdict(list)
    for f in glob.glob(d+"/*.json"):
        for s in json.load(open(f))["schedules"]:
            if s["part"]!="random": continue
            e=s["models"]["tcpflow"]["makespan_s"]/s["measured_s"]-1
            by[s["label"][:2]].append(e)
    print(d, " ".join(f"{k}: ok {sum(abs(e)<=.1 for e in v)} over {sum(e>.1 for e in v)} under {sum(e<-.1 for e in v)} med {sorted(v)[len(v)//2]:+.3f}" for k,v in sorted(by.items())))
