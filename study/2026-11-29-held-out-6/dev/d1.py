import json,os,re,statistics as st,sys
tag=sys.argv[1]
groups={}
for d in open('draws.txt').read().split():
    n=os.path.basename(d); J=json.load(open(f'exp-{tag}/{n}.json'))
    for s in J['schedules']:
        if s['part']=='alltoall': continue
        txt=open(os.path.join(d,'schedules',s['file'])).read()
        sends=set(); recvs=set(); pairs=set()
        rank=None
        for line in txt.splitlines():
            m=re.match(r'rank (\d+)',line)
            if m: rank=int(m.group(1)); continue
            m=re.search(r'send \d+b to (\d+)',line)
            if m: sends.add(rank); pairs.add((rank,int(m.group(1))))
            m=re.search(r'recv \d+b from (\d+)',line)
            if m: recvs.add(rank)
        exch=any((b,a) in pairs for a,b in pairs)
        dup=bool(sends & recvs)
        indeg={}
        for a,b in pairs: indeg[b]=indeg.get(b,0)+1
        fan=max(indeg.values())
        key=(s['label'][:2], 'exch' if exch else ('dup' if dup else 'none'), f'fan{min(fan,3)}')
        err=s['models']['tcpflow']['makespan_s']/s['measured_s']-1
        groups.setdefault(key,[]).append(err)
for k in sorted(groups):
    v=groups[k]; print(k, len(v), f"med {st.median(v):+.0%}", f"within10 {sum(abs(x)<=0.1 for x in v)}/{len(v)}")
