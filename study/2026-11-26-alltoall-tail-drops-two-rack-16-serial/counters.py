"""Per-port drops (cluster status) and summed TCP loss-recovery counters of every host.
Usage: counters.py NAME > snapshot.json"""
import json, subprocess, sys
FIELDS = ["TCPTimeouts", "TCPFastRetrans", "TCPLossProbes", "TCPLossProbeRecovery", "TCPSpuriousRTOs"]
name = sys.argv[1]
st = json.loads(subprocess.run(["commodel", "cluster", "status", "--name", name, "--json"], capture_output=True, text=True, check=True).stdout)
drops = {s["direction"]: s["stats"].get("drops", 0) for s in st["shapers"]}
tot = {}
for h in st["hosts"]:
    ns = h.get("ns") or h.get("namespace")
    lines = subprocess.run(["ip", "netns", "exec", ns, "cat", "/proc/net/netstat"], capture_output=True, text=True, check=True).stdout.splitlines()
    for head, vals in zip(lines[::2], lines[1::2]):
        p, names = head.split(":", 1); _, v = vals.split(":", 1)
        for n, x in zip(names.split(), v.split()):
            if p == "TcpExt" and n in FIELDS:
                tot[n] = tot.get(n, 0) + int(x)
print(json.dumps({"drops": drops, "tcp": tot}))
