import sys,re
for f in sys.argv[1:]:
    a=b=0; c=[0,0]; pts=[]
    for line in open(f):
        if '| 20% below 16 KiB, 5% from it |' not in line: continue
        cols=[x.strip() for x in line.strip().strip('|').split('|')]
        coll,P,s,mg,picks,sp,ta,tb,tc=cols
        if ta!='met': a+=len(ta.split())//2; pts.append(f"{coll}{P}:{ta}")
        if not tb.startswith('met'): b+=len(tb.split('(')[0].split())
        x,y=tc.split('/'); c[0]+=int(x); c[1]+=int(y)
    err=[l.strip() for l in open(f) if l.startswith('model error')]
    print(f, f"(a) fails {a} {pts}; (b) fails {b}; within 5% {c[0]}/{c[1]}"); [print('  ',e) for e in err]
