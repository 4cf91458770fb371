"""Per mpirun of drops.sh: median, min, max of the samples (its DuckDB file), the TCP
loss-recovery counters summed over the hosts and the drops per port (after - before).
Usage: python3 summary.py NAME.jsonl > NAME-summary.txt"""

import json
import statistics
import sys

import duckdb

for line in open(sys.argv[1]):
    r = json.loads(line)
    con = duckdb.connect(r["db"], read_only=True)
    vals = sorted(x[0] for x in con.execute("select value_s from samples").fetchall())
    before, after = r["before"], r["after"]
    drops = {k: v - before["drops"].get(k, 0) for k, v in after["drops"].items()}
    tcp = {k: v - before["tcp"].get(k, 0) for k, v in after["tcp"].items()}
    print(
        f"alg {r['alg']} {r['size']:>6}: n={len(vals)} median {statistics.median(vals) * 1e3:7.1f} ms "
        f"min {vals[0] * 1e3:7.1f} max {vals[-1] * 1e3:7.1f} | tcp {tcp} | "
        f"drops { {k: v for k, v in drops.items() if v} }"
    )
