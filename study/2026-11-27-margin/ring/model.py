"""Predicted step of measure wire's ring ((t(100 steps) - t(20)) / 80) under a platform, with
the platform as it is, without network.bucket and without cpu.
Usage: python3 model.py PLATFORM P SIZES (comma-separated bytes)."""
import sys, copy, yaml
from commodel.schedules import parse_goal
from commodel.platform import platform_from_dict
from commodel.prediction import predict

def ring(P, m, k):
    lines = [f"num_ranks {P}"]
    for r in range(P):
        lines.append(f"rank {r} {{")
        for i in range(k):
            lines.append(f"s{i}: send {m}b to {(r+1)%P} tag {i}")
            lines.append(f"r{i}: recv {m}b from {(r-1)%P} tag {i}")
            if i:
                lines.append(f"s{i} requires r{i-1}")
        lines.append("}")
    return "\n".join(lines) + "\n"

def step(doc, P, m, model="tcpflow"):
    d = copy.deepcopy(doc)
    plat = platform_from_dict(d)
    t = [predict(parse_goal(ring(P, m, k)), plat, model).makespan_s for k in (20, 100)]
    return (t[1] - t[0]) / 80

if __name__ == "__main__":
    doc = yaml.safe_load(open(sys.argv[1]))
    P = int(sys.argv[2])
    for m in [int(x) for x in sys.argv[3].split(",")]:
        nb = copy.deepcopy(doc); nb["network"].pop("bucket", None)
        nc = copy.deepcopy(doc); nc.pop("cpu", None)
        print(m, "model %.1f  nobucket %.1f  nocpu %.1f us" % (step(doc, P, m)*1e6, step(nb, P, m)*1e6, step(nc, P, m)*1e6))
