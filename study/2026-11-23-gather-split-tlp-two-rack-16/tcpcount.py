"""Sum TCP loss-recovery counters over the emulated cluster's host namespaces, and the
packets its qdiscs dropped. Usage: tcpcount.py STATE.json > counts.json"""
import json
import re
import subprocess
import sys

FIELDS = ["TCPTimeouts", "TCPFastRetrans", "TCPLossProbes", "TCPLossProbeRecovery",
          "TCPSpuriousRTOs", "TCPSackRecovery", "TCPRenoRecovery", "TCPLostRetransmit",
          "TCPTimeoutsRecovery" ]


def ns_text(ns, *cmd):
    return subprocess.run(["ip", "netns", "exec", ns, *cmd], capture_output=True, text=True,
                          check=True).stdout


def netstat(ns):
    out = {}
    for path in ("/proc/net/netstat", "/proc/net/snmp"):
        lines = ns_text(ns, "cat", path).splitlines()
        for head, vals in zip(lines[::2], lines[1::2]):
            prefix, names = head.split(":", 1)
            _, values = vals.split(":", 1)
            for n, v in zip(names.split(), values.split()):
                out[f"{prefix}.{n}"] = int(v)
    return out


def drops(ns):
    text = ns_text(ns, "tc", "-s", "qdisc", "show")
    return sum(int(x) for x in re.findall(r"dropped (\d+)", text))


state = json.load(open(sys.argv[1]))
total = {}
for h in state["hosts"]:
    for k, v in netstat(h["ns"]).items():
        total[k] = total.get(k, 0) + v
keep = {k: total.get("TcpExt." + k, 0) for k in FIELDS}
keep["RetransSegs"] = total.get("Tcp.RetransSegs", 0)
keep["qdisc_drops"] = sum(drops(ns) for ns in state["namespaces"] if ns != state["ctl_ns"])
print(json.dumps(keep))
