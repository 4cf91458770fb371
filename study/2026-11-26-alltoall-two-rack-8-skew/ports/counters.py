"""Every port's drops (`commodel cluster status --json`) and the TCP counters of every host
(/proc/net/netstat and snmp in its namespace), summed. Usage: counters.py NAME > snapshot.json"""

import json
import subprocess
import sys

name = sys.argv[1]
status = subprocess.run(
    ["commodel", "cluster", "status", "--name", name, "--json"],
    capture_output=True,
    text=True,
    check=True,
)
st = json.loads(status.stdout)
drops = {s["direction"]: s["stats"].get("drops", 0) for s in st["shapers"]}
tcp = {}
for h in st["hosts"]:
    out = subprocess.run(
        ["ip", "netns", "exec", h["ns"], "cat", "/proc/net/netstat", "/proc/net/snmp"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    for head, vals in zip(out[::2], out[1::2]):
        proto, names = head.split(":", 1)
        for n, x in zip(names.split(), vals.split(":", 1)[1].split()):
            if proto in ("Tcp", "TcpExt") and x.lstrip("-").isdigit():
                tcp[n] = tcp.get(n, 0) + int(x)
print(json.dumps({"drops": drops, "tcp": tcp}))
