"""Summarise exp10.jsonl: per run, repetitions, escalated ones (over the fastest + 150 ms),
and the counters' increase over the run (all hosts; qdisc drops on every port)."""
import json
import statistics

import duckdb

print("| size | k | round | reps | median ms | escalated (> min + 150 ms) | RTO timeouts | fast retrans | loss probes | TLP recoveries | retrans segs | drops |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for line in open("exp10.jsonl"):
    r = json.loads(line)
    con = duckdb.connect(r["db"], read_only=True)
    xs = [x for (x,) in con.execute("SELECT value_s FROM samples ORDER BY rowid").fetchall()]
    con.close()
    d = {k: r["after"][k] - r["before"][k] for k in r["after"]}
    lo = min(xs)
    esc = sum(x > lo + 0.150 for x in xs)
    print(f"| {r['size'] // 1024} KiB | {r['k']} | {r['round']} | {len(xs)} | "
          f"{1e3 * statistics.median(xs):.1f} | {esc} | {d['TCPTimeouts']} | "
          f"{d['TCPFastRetrans']} | {d['TCPLossProbes']} | {d['TCPLossProbeRecovery']} | "
          f"{d['RetransSegs']} | {d['qdisc_drops']} |")
