"""Tables of run.sh's runs.jsonl (or the file given, e.g. runs-32k.jsonl): per setting, algorithm and size, over its mpiruns: the call
time (first entry to last exit; min, median, mean), the calls slower than the fastest by
more than 150 ms (stalls), and per call the drops at the switch ports toward the hosts and
at the two backbone ports, and the TCP timeouts, fast retransmits and lost retransmissions."""

import collections
import json
import statistics as st
import sys

ALG = {2: "pairwise", 4: "linear_sync"}
with open(sys.argv[1] if len(sys.argv) > 1 else "runs.jsonl") as handle:
    runs = [json.loads(line) for line in handle]
groups = collections.defaultdict(list)
for r in runs:
    groups[(r["setting"], r["alg"], r["size"])].append(r)

print(
    f"{'setting':<8} {'algorithm':<11} {'size':>6} {'calls':>5} {'min ms':>7} {'median':>7} "
    f"{'mean':>7} {'stalls':>7} {'host-port drops':>15} {'backbone':>8} {'timeouts':>8} "
    f"{'fast retr.':>10} {'lost retr.':>10}"
)
for (setting, alg, size), rs in sorted(
    groups.items(), key=lambda kv: (kv[0][0], kv[0][2], -kv[0][1])
):
    times, host, bb, tcp = [], 0, 0, collections.Counter()
    for r in rs:
        with open(r["file"]) as handle:
            d = json.load(handle)
        recs = d["recs"]
        times.append(
            [max(x[i][1] for x in recs) - min(x[i][0] for x in recs) for i in range(len(recs[0]))]
        )
        for port, n in r["after"]["drops"].items():
            dn = n - r["before"]["drops"].get(port, 0)
            if "core" in port:
                bb += dn
            else:
                host += dn
        for k in ("TCPTimeouts", "TCPFastRetrans", "TCPLostRetransmit"):
            tcp[k] += r["after"]["tcp"].get(k, 0) - r["before"]["tcp"].get(k, 0)
    flat = [t for ts in times for t in ts]
    low = min(flat)
    stalls = "+".join(str(sum(t > low + 0.15 for t in ts)) for ts in times)
    n = len(flat)
    print(
        f"{setting:<8} {ALG[alg]:<11} {size // 1024:>4}Ki {n:>5} {low * 1e3:>7.1f} "
        f"{st.median(flat) * 1e3:>7.1f} {st.mean(flat) * 1e3:>7.1f} {stalls:>7} "
        f"{host / n:>15.1f} {bb / n:>8.1f} {tcp['TCPTimeouts'] / n:>8.2f} "
        f"{tcp['TCPFastRetrans'] / n:>10.1f} {tcp['TCPLostRetransmit'] / n:>10.2f}"
    )
