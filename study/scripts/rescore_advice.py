"""Re-score ``advise --verify`` measurements offline: which algorithm would the advice pick
with another ``--min-gain``, and what did that algorithm measure against Open MPI's default?

No MPI is run. The advice is predicted again from the platform file; at each (P, m) the
algorithm it picks is looked up among the measured forced runs (a rules file that names an
algorithm runs what forcing it runs: the same function, faninout and segsize); where it
keeps the default, the rules file names the default's algorithm with faninout 0 and
segsize 0, the very call of the fixed decision, so the default run itself stands for it.
The three targets of ``advise --verify`` are evaluated with the spread s of the original
verification (our rules run against the forced run of the algorithm it named).

Also printed: per point, Open MPI's fixed decision (``openmpi.default_algorithm``) with the
measured time of that algorithm forced over the measured default (means and medians), and
the model's error on the gain of every algorithm over the default,
|(t_d / t_a predicted) / (t_d / t_a measured) - 1| (means).

Input: ``advise --verify`` DuckDB files, the samples CSVs this script writes from them
(``--export DIR``: ``C-samples.csv``, every sample with its campaign, algorithm (0: the
default), rules (1: our rules file), splits, round and size), with ``--platform``; or
directories holding ``platform.yaml`` and ``*-samples.csv`` (the model error is then over
all of them). A margin A/B is A below 32 KiB and B from 32 KiB (``advise --min-gain A,B``);
A/B/S splits at S bytes instead.

    python3 study/scripts/rescore_advice.py --min-gain 0,0.2,0.2/0.05 \\
        study/2026-11-22-advise-two-rack-8 study/2026-11-22-advise-two-rack-16
"""

from __future__ import annotations

import argparse
import csv
import glob
import math
import os
import sys

from commodel.advise.advice import (
    MinGain,
    advise,
    alike_classes,
    runs_default_call,
)
from commodel.advise.verify import run_samples, run_spread, targets, verified_point
from commodel.openmpi import default_algorithm
from commodel.platform import load_platform
from commodel.stats import median

# the margin of every rules file written before verify CSVs said which point ran the default's
# own call (the column default_call)
OLD_MIN_GAIN = MinGain.of(0.2)
ROUND_FIELDS = ["campaign", "algorithm", "rules", "splits", "round", "size", "value_s"]


def db_rows(path: str) -> tuple[str, int, list[dict]]:
    """(collective, P, the samples of a verify database as rows of ROUND_FIELDS)."""
    from commodel.db import ResultsDB
    from commodel.measure.collective import campaign_samples

    with ResultsDB(path) as db:
        campaigns = db.campaigns()
    coll, ranks, rows = "", 0, []
    for c in campaigns:
        opts = c.options or {}
        coll, ranks = opts.get("collective", coll), c.ranks or ranks
        for m, xs in sorted(campaign_samples(path, c.id).items()):
            for x in xs:
                rows.append(
                    {
                        "campaign": c.id,
                        "algorithm": opts.get("algorithm") or 0,
                        "rules": 1 if opts.get("rules_file") else 0,
                        "splits": opts.get("splits") or "",
                        "round": opts.get("round") or 0,
                        "size": m,
                        "value_s": repr(x),
                    }
                )
    return coll, ranks, rows


def runs_of(rows: list[dict]) -> dict:
    """{run: {size: samples}} of ROUND_FIELDS rows (algorithm 0 is the default, rules 1 our
    rules file), each run's rounds (mpiruns) judged as ``advise --verify`` judges them, by
    the mean of each (:func:`run_samples`); split gathers left out."""
    rounds: dict = {}
    for r in rows:
        if str(r["splits"]):
            continue
        alg = int(r["algorithm"])
        key = "rules" if str(r["rules"]) == "1" else (alg or "default")
        per_round = rounds.setdefault(key, {}).setdefault(int(r["size"]), {})
        per_round.setdefault(int(r["round"]), []).append(float(r["value_s"]))
    return {
        key: {m: run_samples(list(rr.values())) for m, rr in per_size.items()}
        for key, per_size in rounds.items()
    }


def load_csv(path: str, platform: str) -> tuple[str, int, dict]:
    """A samples CSV: the per-round one (ROUND_FIELDS: :func:`export`'s and the results
    directories'; the collective is the file name's, P the platform's nodes), or the older
    collective,ranks,run,size,value_s (run: default, rules or the forced algorithm)."""
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    if "run" not in rows[0]:
        coll = os.path.basename(path).removesuffix("-samples.csv")
        return coll, int(load_platform(platform).nodes), runs_of(rows)
    runs: dict = {}
    for r in rows:
        key = r["run"] if r["run"] in ("default", "rules") else int(r["run"])
        runs.setdefault(key, {}).setdefault(int(r["size"]), []).append(float(r["value_s"]))
    return rows[0]["collective"], int(rows[0]["ranks"]), runs


def rules_named(path: str, coll: str) -> dict[int, tuple[int, bool | None]]:
    """{size: (the algorithm our rules file named, whether that was the default decision's
    own call, None if the file does not say)} from the ``verify-C.verify.csv`` that
    ``advise --verify`` wrote next to the samples, if there is one."""
    found = os.path.join(os.path.dirname(path), f"verify-{coll}.verify.csv")
    if not os.path.exists(found):
        return {}
    with open(found, newline="") as handle:
        return {
            int(r["size"]): (
                int(r["chosen"]),
                r["default_call"] == "True" if "default_call" in r else None,
            )
            for r in csv.DictReader(handle)
        }


def export(path: str, rows: list[dict]) -> None:
    with open(path, "w", newline="") as handle:
        out = csv.DictWriter(handle, fieldnames=ROUND_FIELDS)
        out.writeheader()
        out.writerows(rows)


def mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def kib(m: int) -> str:
    return f"{m // 1024}K" if m >= 1024 else f"{m}B"


def margin(text: str) -> MinGain:
    """A margin of ``--min-gain``: A, A/B or A/B/S (fractions; S the split in bytes)."""
    if "/" not in text:
        return MinGain.of(float(text))
    small, large, *split = text.split("/")
    return MinGain(float(small), float(large), *(int(x) for x in split))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--platform", help="platform of files given (a directory has its own)")
    ap.add_argument(
        "--min-gain",
        default="0,0.2,0.3/0.05,0.5",
        help="margins to re-score, comma-separated; A/B: A below 32 KiB, B from 32 KiB; "
        "A/B/S: split at S bytes",
    )
    ap.add_argument("--export", metavar="DIR", help="write C-samples.csv per input to DIR")
    ap.add_argument("inputs", nargs="+")
    args = ap.parse_args()
    gains = [margin(x) for x in args.min_gain.split(",")]
    errors: list[tuple[int, float]] = []
    agree, scores = [], []
    todo = []
    for path in args.inputs:
        if os.path.isdir(path):
            files = sorted(glob.glob(os.path.join(path, "*-samples.csv")))
            todo += [(os.path.join(path, "platform.yaml"), f) for f in files]
        elif args.platform:
            todo.append((args.platform, path))
        else:
            ap.error(f"{path}: give --platform for files")
    for platform, path in todo:
        if path.endswith(".csv"):
            coll, p, runs = load_csv(path, platform)
        else:
            coll, p, rows = db_rows(path)
            runs = runs_of(rows)
            if args.export:
                export(os.path.join(args.export, f"{coll}-samples.csv"), rows)
        sizes = sorted(s for s in runs.get("default", {}) if s in runs.get("rules", {}))
        if not sizes:
            print(f"{path}: no size with both a default and a rules run; skipped")
            continue
        adv = advise(platform, coll, [p], sizes, min_gain=0.0)
        pts = {pt.size: pt for pt in adv.points}
        cells = []
        for m in sizes:
            n = default_algorithm(coll, p, m)
            forced = {a: mean(runs[a][m]) for a in runs if isinstance(a, int) and m in runs[a]}
            d = runs["default"][m]
            f = runs[n][m]
            cells.append(f"{kib(m)} {n}: {mean(f) / mean(d):.2f} / {median(f) / median(d):.2f}")
            pt = pts[m]
            for c in pt.candidates:
                if c.time_s and c.number in forced and c.number != n and pt.default.time_s:
                    r_pred = pt.default.time_s / c.time_s
                    r_meas = forced[n] / forced[c.number]
                    errors.append((m, abs(r_pred / r_meas - 1.0)))
        agree.append(f"| {coll} | {p} | {'; '.join(cells)} |")
        named = rules_named(path, coll) or {m: (pts[m].choice(0.0).number, None) for m in sizes}
        spread = run_spread([(mean(runs["rules"][m]), mean(runs[named[m][0]][m])) for m in sizes])
        for label, g in [("measured rules run", None)] + [(str(x), x) for x in gains]:
            vps, picks = [], []
            for m in sizes:
                pt = pts[m]
                keep = g is not None and pt.keeps_default(g)
                chosen = named[m][0] if g is None else pt.choice(g).number
                ours = runs["rules"][m] if g is None else runs[chosen][m]
                if keep:
                    ours = runs["default"][m]
                forced = {a: runs[a][m] for a in runs if isinstance(a, int) and m in runs[a]}
                fixed = default_algorithm(coll, p, m)
                alike = alike_classes(coll, p, m, forced)
                if g is None:  # the rules file named `chosen`, the default's call if kept
                    same = named[m][1]
                    if same is None:  # files before the column: a margin of 20% at every size
                        cand = next(c for c in pt.candidates if c.number == chosen)
                        if chosen == fixed and pt.keeps_default(OLD_MIN_GAIN):
                            cand = pt.default
                        same = runs_default_call(coll, pt, cand, fixed)
                else:
                    same = runs_default_call(coll, pt, pt.choice(g), fixed)
                vps.append(
                    verified_point(
                        p, m, runs["default"][m], ours, forced, chosen, 1, fixed, alike, same
                    )
                )
                far = "" if vps[-1].within else "!"
                picks.append(f"{kib(m)} {'d' if keep else ''}{chosen}{far}")
            t = targets(vps, spread=spread)
            geo = math.exp(sum(math.log(v.speedup) for v in vps) / len(vps))
            slower = ", ".join(f"{kib(v.size)} {v.speedup:.2f}" for v in t.slower) or "met"
            short = ", ".join(kib(v.size) for v in t.gap_short) or "met"
            scores.append(
                f"| {coll} | {p} | {100 * spread:.1f}% | {label} | {' '.join(picks)} | "
                f"{geo:.2f} | {slower} | {short} ({len(t.gap_points)}) | "
                f"{t.within}/{t.points} |"
            )
    print("Forced run of the fixed decision's algorithm over the default run, mean / median:\n")
    print("| collective | P | size, algorithm: ratio of means / of medians |\n|---|---|---|")
    print("\n".join(agree))
    print(
        "\nRe-scored targets (d: the default kept; numbers: Open MPI's algorithm numbers; "
        "!: not within 5% of the measured best):\n"
    )
    print(
        "| collective | P | spread s | min-gain | picks | speedup, geometric mean | "
        "(a) slower than the default | (b) gap < 50% (points with a gap) | (c) within 5% |"
    )
    print("|---|---|---:|---|---|---:|---|---|---:|")
    print("\n".join(scores))
    if errors:
        for label, sel in (
            ("all", [e for _, e in errors]),
            ("below 16 KiB", [e for m, e in errors if m < 16384]),
            ("from 16 KiB", [e for m, e in errors if m >= 16384]),
            ("16-32 KiB", [e for m, e in errors if 16384 <= m < 32768]),
            ("from 32 KiB", [e for m, e in errors if m >= 32768]),
        ):
            if sel:
                print(f"\nmodel error on the gain over the default, {label}: median "
                      f"{median(sel):.3f} over {len(sel)} pairs", end="")  # fmt: skip
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
