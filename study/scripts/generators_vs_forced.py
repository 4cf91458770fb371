"""Our generators' predictions beside Open MPI's forced algorithms as measured.

Reads the forced runs of an ``advise --verify`` (or ``measure collective``) database and
prints a markdown table: per size and algorithm, the measured mean / the prediction
(``advise``'s, on the platform file, under ``--model`` or the platform's default) and their
ratio, then per algorithm the median ratio and its range, and at how many sizes the
predicted best is the measured best. No MPI is run.

    python3 study/scripts/generators_vs_forced.py PLATFORM.yaml VERIFY.duckdb bcast 8 [--model M]
"""

from __future__ import annotations

import argparse
import statistics

from commodel.advise.advice import advise
from commodel.advise.rules import ALGORITHMS
from commodel.db import ResultsDB
from commodel.platform import load_platform
from commodel.units import format_duration, format_size


def measured_means(db_path: str, collective: str, ranks: int) -> dict[int, dict[int, float]]:
    """algorithm -> size -> mean seconds, over the forced runs (no rules file, no split)."""
    out: dict[int, dict[int, float]] = {}
    with ResultsDB(db_path, read_only=True) as db:
        for c in db.campaigns():
            o = c.options
            if c.benchmark != "collective" or o.get("collective") != collective:
                continue
            if c.ranks != ranks or o.get("rules_file") or int(o.get("splits", 1) or 1) > 1:
                continue
            alg = int(o.get("algorithm", 0))
            if not alg:
                continue
            per: dict[int, list[float]] = {}
            for row in db.samples(c.id):
                per.setdefault(int(row["size_bytes"]), []).append(float(row["value_s"]))
            out[alg] = {m: statistics.mean(v) for m, v in per.items()}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("platform")
    ap.add_argument("db")
    ap.add_argument("collective")
    ap.add_argument("ranks", type=int)
    ap.add_argument("--model")
    a = ap.parse_args()
    measured = measured_means(a.db, a.collective, a.ranks)
    sizes = sorted({m for v in measured.values() for m in v})
    adv = advise(load_platform(a.platform), a.collective, [a.ranks], sizes, model=a.model, jobs=1)
    names = {n: name for n, name, _ in ALGORITHMS[a.collective]}
    algs = sorted(measured)
    print(f"{a.collective}, {a.ranks} ranks, model {adv.model}: measured / predicted "
          "(ratio predicted/measured)\n")  # fmt: skip
    print(
        "| size | "
        + " | ".join(f"{n} {names[n]}" for n in algs)
        + " | best measured | best predicted |"
    )
    print("|---" * (len(algs) + 3) + "|")
    ratios: dict[int, list[float]] = {n: [] for n in algs}
    agree = 0
    for pt in adv.points:
        pred = {c.number: c.time_s for c in pt.candidates}
        cells = []
        for n in algs:
            t, p = measured[n].get(pt.size), pred.get(n)
            if t and p:
                ratios[n].append(p / t)
                cells.append(f"{format_duration(t)} / {format_duration(p)} ({p / t:.2f})")
            else:
                cells.append("-")
        meas = {n: measured[n][pt.size] for n in algs if pt.size in measured[n]}
        best_m = min(meas, key=meas.__getitem__) if meas else None
        best_p = pt.best.number if pt.best else None
        agree += best_m == best_p
        print(f"| {format_size(pt.size)} | " + " | ".join(cells)
              + f" | {best_m} {names.get(best_m, '')} | {best_p} {names.get(best_p, '')} |")  # fmt: skip
    print()
    for n in algs:
        if ratios[n]:
            r = ratios[n]
            print(f"- {n} {names[n]}: median predicted/measured {statistics.median(r):.2f} "
                  f"(range {min(r):.2f}-{max(r):.2f})")  # fmt: skip
    print(f"- the predicted best is the measured best at {agree} of {len(adv.points)} sizes")


if __name__ == "__main__":
    main()
