import json,glob,os,sys
for tag in sys.argv[1:]:
    tp=fp=fn=0; miss=[]; falsep=[]
    for f in sorted(glob.glob(f"exp-{tag}/*.json")):
        n=os.path.basename(f)[:-5]; J=json.load(open(f))
        for s in J['schedules']:
            t=s['models']['tcpflow']
            if 'makespan_s' not in t: continue
            m = s['timeouts'] >= max(1.0, s['reps']/2); p=(t.get('rto') or 0)>0
            tp+=m and p; fp+=p and not m; fn+=m and not p
            if m and not p: miss.append(f"{n}:{s['label']}")
            if p and not m: falsep.append(f"{n}:{s['label']}")
    P=tp/(tp+fp) if tp+fp else float('nan'); R=tp/(tp+fn) if tp+fn else float('nan')
    print(f"{tag}: tp {tp} fp {fp} fn {fn} precision {P:.2f} recall {R:.2f}")
    if len(sys.argv)==2: print(' fn:',' '.join(miss)); print(' fp:',' '.join(falsep))
