"""Which MPICH algorithm would the advice pick with a platform, and how did it measure?

python rescore.py PLATFORM OUT...   # OUT: run.sh outputs holding verify-mpich-<coll>.duckdb

No MPI is run. Per collective and size: the mean time of every forced algorithm and of
MPICH's default over both mpiruns (``advise --verify``'s campaigns); the advice predicted
again from PLATFORM (``advise --mpi mpich``, its default margin); its pick counts as within
5% where that algorithm's forced time (the default run where it keeps the default) is within
5% of the best forced time, as summarize.py counts the measured rules (an approximation of
it: our rules' own runs are not used, and no two algorithms count as alike).
"""

import glob
import json
import os
import statistics
import sys

import duckdb

from commodel.advise.advice import advise
from commodel.platform import load_platform


def measured(db: str) -> tuple[str, dict]:
    con = duckdb.connect(db, read_only=True)
    times: dict = {}
    coll = None
    for cid, opts, ranks in con.execute("select id, options, ranks from campaigns").fetchall():
        o = json.loads(opts)
        times["ranks"] = int(ranks)
        if o.get("rules_file"):
            continue
        coll = o["collective"]
        for size, value in con.execute(
            "select size_bytes, value_s from samples where campaign = ? and quantity = 'time'",
            [cid],
        ).fetchall():
            times.setdefault((int(o["algorithm"]), int(size)), []).append(value)
    con.close()
    ranks = times.pop("ranks")
    return coll, ranks, {k: statistics.fmean(v) for k, v in times.items()}


def main() -> None:
    plat = load_platform(sys.argv[1])
    total = ok = 0
    for out in sys.argv[2:]:
        for db in sorted(glob.glob(os.path.join(out, "verify-mpich-*.duckdb"))):
            if "-x-" in db:
                continue
            coll, ranks, t = measured(db)
            sizes = sorted({m for _a, m in t})
            adv = advise(plat, coll, [ranks], sizes, mpi="mpich", jobs=1)
            for pt in adv.points:
                forced = {a: v for (a, m), v in t.items() if m == pt.size and a > 0}
                best = min(forced, key=forced.get)
                pick = pt.choice(adv.min_gain)
                keep = pick is None or pt.keeps_default(adv.min_gain)
                mine = t[(0, pt.size)] if keep else forced.get(pick.number)
                good = mine is not None and mine <= 1.05 * forced[best]
                total += 1
                ok += good
                name = "default" if keep else pick.name
                print(
                    f"{os.path.basename(out)} {coll:9} {pt.size:8d} pick {name:28} "
                    f"{'ok ' if good else 'MISS'} best {best} {forced[best] * 1e3:.3f} ms"
                )
    print(f"within 5%: {ok}/{total}")


if __name__ == "__main__":
    main()
