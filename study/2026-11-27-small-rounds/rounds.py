"""Per-mpirun means (us) of every run at each size of a verify database: the default (0),
our rules (rules) and each forced algorithm, one column a round.
Usage: python3 rounds.py DIR/verify-allreduce.duckdb"""
import sys

from commodel.db import ResultsDB
from commodel.measure.collective import campaign_samples

path = sys.argv[1]
with ResultsDB(path) as db:
    camps = db.campaigns()
table: dict = {}
for c in camps:
    o = c.options or {}
    key = "rules" if o.get("rules_file") else str(o.get("algorithm") or 0)
    for m, xs in campaign_samples(path, c.id).items():
        table.setdefault((m, key), []).append(1e6 * sum(xs) / len(xs))
for (m, key), means in sorted(table.items(), key=lambda kv: (kv[0][0], kv[0][1])):
    print(f"{m:>6} {key:>6}  mean {sum(means) / len(means):8.1f}  " + " ".join(f"{x:7.1f}" for x in means))
