"""The over-predicted d = 1 patterns of an exp.py output: tcpflow (noisy median, noise-free), maxmin, plogp against the measured median: PYTHONPATH=<code> python dissect.py OUT"""
import json,glob,sys,os
import commodel
from commodel.prediction import predict
D=sys.argv[1]
n=0
for f in sorted(glob.glob(D+"/*.json")):
    name=os.path.basename(f)[:-5]
    j=json.load(open(f))
    plat=f"{D}/{name}/refit.yaml"
    for s in j["schedules"]:
        if s["part"]!="random" or not s["label"].startswith("d1"): continue
        e=s["models"]["tcpflow"]["makespan_s"]/s["measured_s"]-1
        if e<=0.1: continue
        g=f"{D}/{name}/schedules/{s['file']}"
        meas=s["measured_s"]
        free=predict(g,plat,"tcpflow",noise=0).makespan_s
        noisy=predict(g,plat,"tcpflow").makespan_s
        mm=predict(g,plat,"maxmin").makespan_s
        pl=predict(g,plat,"plogp").makespan_s
        print(f"{name[-14:]} {s['label']} meas {meas*1e3:.1f} tcpflow {noisy/meas-1:+.2f} free {free/meas-1:+.2f} maxmin {mm/meas-1:+.2f} plogp {pl/meas-1:+.2f}")
        n+=1
        if n>=25: sys.exit()
