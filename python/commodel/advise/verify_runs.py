"""``advise --verify``: measure the advice on the real MPI.

Per communicator size P, one mpirun each (:func:`commodel.measure.collective.sweep_campaigns`,
all campaigns in one DuckDB file): Open MPI's default decision, our rules file
(``--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename FILE``),
every forced coll/tuned algorithm and, for gather, the split gathers the advice proposes
(``measure collective --splits K`` with basic_linear forced, as the ``gather-split``
generator's linear sub-gathers). Each campaign's options record its forcing, so running
the same command again keeps complete campaigns and resumes an interrupted one. The
comparison is :mod:`.verify`'s; a CSV of it is written next to the database.

Our rules file is the advice's, or with ``--use-rules FILE`` a given one (e.g. measured
rules of an earlier verification). Measured rules (:func:`rules_from_measured`,
``--measured-rules``) name the measured best where the default is not it: they are chosen
from the measurements, so only a fresh verification of them says what they are worth.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from typing import Any

from ..errors import CommodelError
from ..openmpi import rule_message_size
from .advice import (
    Advice,
    alike_classes,
    ran,
    rules_table,
    runs_default_call,
    runs_otherwise_as_default,
)
from .rules import (
    COLLECTIVE_IDS,
    CollectiveRules,
    MessageRule,
    collective_table,
    comm_rule,
    lookup,
    message_rule,
)
from .verify import VerifiedPoint, run_samples, targets, verified_point

CSV_FIELDS = [
    "ranks",
    "size",
    "default_s",
    "ours_s",
    "chosen",
    "chosen_name",
    "chosen_rank",
    "best",
    "best_name",
    "best_s",
    "speedup",
    "speedup_lo",
    "speedup_hi",
    "gap_recovered",
    "within_5pct",
    "split_k",
    "split_s",
    "default_alg",
    "default_alg_name",
    "linear_s",
    "rounds",
    "alike_best",
    "default_call",
    "ran",
]


# The MPIs whose rules ``--verify`` proves fired, by what one call under them sent to each
# peer: Open MPI 5 counts it itself (pml/monitoring), Intel MPI's bytes are the kernel's
# (on the emulated cluster, one rank a host); MPICH's are not counted yet.
COUNTED = {
    "openmpi-5.0": "as Open MPI's pml/monitoring counted them",
    "intel-mpi": "as the kernel's TCP byte counts per peer showed them (headers allowed)",
}


def rules_path(db_path: str, rules: str | None) -> str:
    """``--rules FILE``, or the database's name with ``.rules.txt``."""
    if rules:
        return os.path.abspath(rules)
    return os.path.abspath(os.path.splitext(db_path)[0] + ".rules.txt")


def check_rules_unchanged(db_path: str, path: str, text: str | bytes) -> None:
    """A resumed verification must measure the same rules: refuse to overwrite a rules file
    whose campaigns are in the database when its content (``text``, or the bytes of a
    --use-rules file) would change."""
    if not os.path.exists(path) or not os.path.exists(db_path):
        return
    with open(path, "rb") as handle:
        if handle.read() == (text.encode() if isinstance(text, str) else text):
            return
    from ..db import ResultsDB

    with ResultsDB(db_path) as db:
        used = [c.id for c in db.campaigns() if (c.options or {}).get("rules_file") == path]
    if used:
        raise CommodelError(
            f"--verify {db_path}: campaign {used[-1]} measured the rules file {path}, whose "
            "advice has changed since; give a new --verify database (or --rules FILE)"
        )


def rules_pick(
    collective: str, tables: list[CollectiveRules], ranks: int, size: int, fixed: int | None
) -> tuple[int | None, bool]:
    """(the algorithm Open MPI 4.1.4 runs at (P, m) with the rules ``tables``, whether that
    is the fixed decision's own call). No rule, or algorithm 0, leaves the call to the fixed
    decision (algorithm ``fixed``); a rule naming ``fixed`` with faninout 0 and segsize 0 is
    its call as :func:`.advice.rules_table` writes a kept default."""
    hit = lookup(
        tables, COLLECTIVE_IDS[collective], ranks, rule_message_size(collective, size, ranks)
    )
    if hit is None:
        return fixed, True
    number, fan, seg = hit
    same = number == fixed and (
        (fan, seg) == (0, 0) or not runs_otherwise_as_default(collective, number)
    )
    return number, same


def rules_from_measured(
    collective: str, points: list[VerifiedPoint], base: list[CollectiveRules] | None = None
) -> tuple[CollectiveRules | None, list[VerifiedPoint]]:
    """Rules from a verification's measurements, and the points where they depart from the
    default: the measured best forced algorithm where the default is slower than it by more
    than the run-to-run spread s and does not run it (target (b)'s points,
    :func:`.verify.targets`); everywhere else algorithm 0: no rule, Open MPI's default
    decision. Below the smallest and above the largest size measured, the rules ``base``
    (``--use-rules``: the file verified) as they stand, or without it the default; so are
    the communicator sizes not measured."""
    depart = targets(points).gap_points
    where = {(v.ranks, v.size) for v in depart}
    picks: dict[int, list[tuple[int, int, bool]]] = {}
    for v in sorted(points, key=lambda q: (q.ranks, q.size)):
        row = picks.setdefault(v.ranks, [])
        if (v.ranks, v.size) not in where:
            row.append((v.size, 0, True))
            continue
        # the best, or an algorithm that runs its schedule here: the one picked at the size
        # before if it does (fewer rules), else the lowest number
        alike = next((c for c in v.alike if v.best in c), frozenset({v.best}))
        before = row[-1][1] if row and row[-1][1] else None
        row.append((v.size, before if before in alike else min(alike), False))
    table = rules_table(collective, picks)
    if table is None:
        return None, depart
    cid = COLLECTIVE_IDS[collective]
    for comm in table.comm_rules:  # the measured sizes' span; outside it the base's rules
        sizes = [size for size, _, _ in picks[comm.comm_size]]
        first = rule_message_size(collective, min(sizes), comm.comm_size)
        last = rule_message_size(collective, max(sizes), comm.comm_size) + 1
        outer = comm_rule(base or [], cid, comm.comm_size)
        head = [r for r in (outer.rules if outer else []) if r.msg_size < first]
        if first > 0 and not head:
            head = [MessageRule(0, 0)]
        after = message_rule(outer, last) or MessageRule(0, 0)
        tail = [replace(after, msg_size=last)]
        tail += [r for r in (outer.rules if outer else []) if r.msg_size > last]
        comm.rules[0] = replace(comm.rules[0], msg_size=first)
        rules: list[MessageRule] = []
        for r in head + comm.rules + tail:
            r = replace(r, line=0)  # the base file's line numbers do not carry over
            if not rules or _call(rules[-1]) != _call(r):
                rules.append(r)
        comm.rules = rules
    if base:  # the base's other communicator sizes, as they stand
        measured = {c.comm_size for c in table.comm_rules}
        old = collective_table(base, cid)
        if old:
            keep = [c for c in old.comm_rules if c.comm_size not in measured]
            table.comm_rules = sorted(keep + table.comm_rules, key=lambda c: c.comm_size)
    return table, depart


def _call(rule: MessageRule) -> tuple[int, int, int]:
    return rule.algorithm, rule.faninout, rule.segsize


def check_launcher(mpirun: list[str], ranks: int, python: str | None = None) -> None:
    """Start ``python -c pass`` on ``ranks`` ranks with the launcher; a clear error (naming
    the command) when it fails, e.g. no emulated cluster is up."""
    from ..measure.collective import launch_argv

    argv = launch_argv(mpirun, ranks, []) + [python or sys.executable, "-c", "pass"]
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    except OSError as exc:
        raise CommodelError(f"--mpirun: cannot start {argv[0]!r}: {exc}") from None
    except subprocess.TimeoutExpired:
        raise CommodelError(f"--mpirun: {' '.join(argv)[:200]} did not finish in 600 s") from None
    if res.returncode != 0:
        said = [ln.strip() for ln in res.stderr.splitlines() if ln.strip("- \t")]
        last = " ".join(said[:2])[:200] or "(no message)"
        raise CommodelError(
            f"--mpirun: the launcher failed on {ranks} ranks (exit {res.returncode}): {last} "
            f"(command: {' '.join(argv)[:200]}); is the cluster up (commodel cluster status)?"
        )


def verify(
    adv: Advice,
    db_path: str,
    rules_file: str,
    mpirun: list[str],
    root: int = 0,
    min_reps: int | None = None,
    max_reps: int | None = None,
    quiet: bool = False,
    python: str | None = None,
    rounds: int = 1,
    budget: float | None = None,
    tables: list[CollectiveRules] | None = None,
) -> tuple[list[VerifiedPoint], dict[tuple[int, int], float], list[str]]:
    """Measure every run of every P in ``adv`` (see the module text). Returns the verified
    points, the measured split-gather times {(P, m): mean s} and the failed runs.
    ``rounds`` > 1: every run (default, rules, each forced algorithm, each split) is measured
    in as many mpiruns, round after round (round r's campaigns record ``round: r``), and
    judged by its per-round means (:func:`.verify.run_samples`), so that an offset of one
    mpirun is neither taken for the advice's effect nor left out of its interval. ``tables``:
    the tables of ``rules_file`` when it is not the advice's (``--use-rules``); a point's
    chosen algorithm is then the one they name there (:func:`rules_pick`)."""
    if rounds < 1:
        raise CommodelError(f"--rounds {rounds}: expected at least 1")
    from ..measure.collective import (
        SweepRun,
        campaign_samples,
        sweep_algorithms,
        sweep_campaigns,
        traffic_of,
    )
    from ..mpis import get as get_mpi

    default_algorithm = get_mpi(adv.mpi).default_algorithm
    coll = adv.collective
    by_p: dict[int, list[Any]] = {}
    for pt in adv.points:
        by_p.setdefault(pt.ranks, []).append(pt)
    points, split_times, failed = [], {}, []
    for p in sorted(by_p):
        check_launcher(mpirun, p, python)
        pts = by_p[p]
        given = {
            "collective": coll,
            "sizes": [pt.size for pt in pts],
            "root": root,
            "min_reps": min_reps,
            "max_reps": max_reps,
            "budget": budget,
        }
        base = [SweepRun(0), SweepRun("rules", 0, rules_file)]
        base += [SweepRun(a, a) for a in sweep_algorithms(coll, p, adv.mpi) if a]
        splits: dict[int, list[int]] = {}
        for pt in pts:
            if pt.split is not None:
                splits.setdefault(pt.split.k, []).append(pt.size)
        for k, sizes in sorted(splits.items()):
            base.append(SweepRun(f"split{k}", 1, None, (("splits", k), ("sizes", sizes))))
        runs = list(base)
        for r in range(1, rounds):  # round r: every run again, its campaign marked
            runs += [replace(b, key=(b.key, r), given=b.given + (("round", r),)) for b in base]
        if adv.mpi in COUNTED:  # which algorithm our rules ran, as counted peer by peer
            runs.append(SweepRun("ran", 0, rules_file, (("traffic", True),)))
        campaigns, bad = sweep_campaigns(db_path, given, p, mpirun, runs, quiet, python, adv.mpi)
        failed += [f"P={p} {b}" for b in bad]
        counted = traffic_of(db_path, campaigns.pop("ran")) if "ran" in campaigns else {}
        # per run key and size, the samples of each round's mpirun
        samples: dict[int | str, dict[int, list[list[float]]]] = {}
        for key, cid in campaigns.items():
            first = key[0] if isinstance(key, tuple) else key
            for m, xs in campaign_samples(db_path, cid).items():
                samples.setdefault(first, {}).setdefault(m, []).append(xs)
        judged = {
            key: {m: run_samples(rs) for m, rs in by_m.items()} for key, by_m in samples.items()
        }
        for k in splits:
            for m, xs in judged.get(f"split{k}", {}).items():
                if xs:
                    split_times[(p, m)] = sum(xs) / len(xs)
        for pt in pts:
            default = judged.get(0, {}).get(pt.size)
            ours = judged.get("rules", {}).get(pt.size)
            forced = {
                key: s[pt.size]
                for key, s in judged.items()
                if isinstance(key, int) and key and pt.size in s
            }
            fixed = default_algorithm(coll, p, pt.size)
            if tables is None:
                chosen = pt.choice(adv.min_gain)
                number = chosen.number if chosen else None
                same = chosen is not None and runs_default_call(coll, pt, chosen, fixed)
            else:
                number, same = rules_pick(coll, tables, p, pt.size, fixed)
            if not default or not ours or not forced or number is None:
                continue
            rounds = min(len(samples[key][pt.size]) for key in (0, "rules"))
            alike = alike_classes(coll, p, pt.size, forced, root, adv.mpi)
            point = verified_point(
                p, pt.size, default, ours, forced, number, rounds, fixed, alike, same
            )
            if pt.size in counted:
                matrix = counted[pt.size]
                point = replace(point, ran=tuple(ran(coll, p, pt.size, matrix, root, adv.mpi)))
            points.append(point)
    return points, split_times, failed


def csv_rows(
    coll: str, points: list[VerifiedPoint], adv: Advice, split_times: dict
) -> list[list[Any]]:
    from ..mpis import get as get_mpi

    algorithm_label = get_mpi(adv.mpi).label_of
    default_algorithm = get_mpi(adv.mpi).default_algorithm

    splits = {(pt.ranks, pt.size): pt.split for pt in adv.points if pt.split is not None}
    rows = []
    for v in points:
        split = splits.get((v.ranks, v.size))
        rows.append(
            [
                v.ranks,
                v.size,
                v.default_s,
                v.ours_s,
                v.chosen,
                algorithm_label(coll, v.chosen),
                v.chosen_rank,
                v.best,
                algorithm_label(coll, v.best),
                v.best_s,
                v.speedup,
                v.speedup_lo,
                v.speedup_hi,
                v.gap_recovered(),
                v.within,
                split.k if split else None,
                split_times.get((v.ranks, v.size)),
                default_algorithm(coll, v.ranks, v.size),
                algorithm_label(coll, default_algorithm(coll, v.ranks, v.size)),
                v.forced_s.get(1) if coll == "gather" else None,  # the plain linear gather
                v.rounds,
                v.alike_best,
                v.default_call,
                None if v.ran is None else " ".join(str(n) for n in v.ran),
            ]
        )
    return rows


def write_csv(path: str, rows: list[list[Any]]) -> None:
    import csv

    with open(path, "w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerow(CSV_FIELDS)
        for row in rows:
            out.writerow(
                ["" if x is None else (f"{x:.9g}" if isinstance(x, float) else x) for x in row]
            )


def format_verified(coll: str, points: list[VerifiedPoint], adv: Advice, split_times: dict) -> str:
    from ..mpis import get as get_mpi

    algorithm_label = get_mpi(adv.mpi).label_of
    default_algorithm = get_mpi(adv.mpi).default_algorithm
    from ..report.tables import format_table
    from ..units import format_duration, format_size

    def ratio(x: float | None) -> str:
        return "-" if x is None else f"{x:.3f}"

    rows = []
    for v in points:
        gap = v.gap_recovered()
        fixed = default_algorithm(coll, v.ranks, v.size)
        rows.append(
            [
                v.ranks,
                format_size(v.size),
                f"{fixed} {algorithm_label(coll, fixed)}",
                format_duration(v.default_s),
                format_duration(v.ours_s),
                f"{v.best} {algorithm_label(coll, v.best)}",
                format_duration(v.best_s),
                f"{v.chosen} {algorithm_label(coll, v.chosen)}",
                v.chosen_rank or "-",
                f"{v.speedup:.3f} [{ratio(v.speedup_lo)}, {ratio(v.speedup_hi)}]",
                "-" if gap is None else f"{100 * gap:.0f}%",
                "same run" if v.alike_best else ("yes" if v.within else "no"),
            ]
        )
    heads = ["P", "size", "default runs", "default", "ours", "best forced", "time", "chosen",
             "rank", "speedup [95% CI]", "gap rec.", "<=5%"]  # fmt: skip
    # an MPI whose default commodel does not know (Intel MPI's) has algorithm 0 throughout
    known = any(default_algorithm(coll, v.ranks, v.size) for v in points)
    runs = (
        "which runs its fixed decision's algorithm, `default runs`"
        if known
        else "its own choice, which commodel does not know: `default runs` 0"
    )
    lines = [
        f"{coll}: measured mean time with {get_mpi(adv.mpi).label}'s default decision ({runs}), "
        "with our rules (ours) and with each algorithm forced; "
        "speedup = t_default / t_ours with its 95% Fieller interval",
    ]
    k = min((v.rounds for v in points), default=1)
    if k > 1:
        lines.append(
            f"(every run measured in {k} mpiruns: times are means of the per-mpirun means, "
            "the intervals from those means)"
        )
    lines += [
        "",
        format_table(heads, rows, align="rrlrrlrlrlrl"),
    ]
    if any(v.alike_best for v in points):
        lines.append(
            "same run: the chosen algorithm runs the best one's schedule here (one function "
            "of Open MPI's, e.g. allreduce segmented_ring without a segment size is its ring); "
            "their forced times differ by the run-to-run spread"
        )
    t = targets(points)
    n = len(points)
    lines += [
        "",
        f"run-to-run spread s = {100 * t.spread:.1f}% (median |t_ours / t_forced(chosen) - 1|)",
        f"(a) never slower than the default beyond s: {'met' if t.a_ok else 'NOT met'}"
        + ("" if t.a_ok else " at " + _where(t.slower))
        + (
            "; not judged where our rules run the default's own call (two mpiruns of one "
            "call): " + ", ".join(f"{_where([v])} {v.speedup:.2f}" for v in t.unjudged)
            if t.unjudged
            else ""
        ),
        f"(b) >= 50% of the gap recovered where the default is slower than the best by more "
        f"than s ({len(t.gap_points)} points): {'met' if t.b_ok else 'NOT met'}"
        + ("" if t.b_ok else " at " + _where(t.gap_short)),
        f"(c) chosen algorithm within 5% of the measured best in >= 80%: {t.within}/{n} "
        f"({100 * t.within / n if n else 0:.0f}%), {'met' if t.c_ok else 'NOT met'}",
    ]
    counted = [v for v in points if v.ran is not None]
    if counted:
        missed = [v for v in counted if not v.fired]
        lines.append(
            f"rules fired: one call per size under our rules sent the chosen algorithm's "
            f"messages, peer by peer, {COUNTED.get(adv.mpi, 'as counted')}, at "
            f"{len(counted) - len(missed)}/{len(counted)} points"
            + "".join(
                f"; {_where([v])}: "
                + (
                    "ran " + ", ".join(f"{a} {algorithm_label(coll, a)}" for a in v.ran)
                    if v.ran
                    else "no algorithm's messages"
                )
                for v in missed
            )
        )
    split_rows = []
    for pt in adv.points:
        if pt.split is None:
            continue
        v = next((q for q in points if (q.ranks, q.size) == (pt.ranks, pt.size)), None)
        measured = split_times.get((pt.ranks, pt.size))
        linear = v.forced_s.get(1) if v else None  # basic_linear forced: the plain gather
        split_rows.append(
            [
                pt.ranks,
                format_size(pt.size),
                pt.split.k,
                format_duration(pt.split.time_s) if pt.split.time_s is not None else "-",
                format_duration(measured) if measured is not None else "-",
                format_duration(linear) if linear is not None else "-",
                f"{linear / measured:.3f}" if linear and measured else "-",
                format_duration(v.default_s) if v else "-",
                f"{v.default_s / measured:.3f}" if v and measured else "-",
            ]
        )
    if split_rows:
        lines += [
            "",
            "gather split into k linear sub-gathers, a barrier between two (no Open MPI "
            "algorithm: not in the rules file);\nmeasured against the plain linear gather "
            "(basic_linear forced) and Open MPI's default (speedup = t / t_split):",
            format_table(
                [
                    "P",
                    "size",
                    "k",
                    "predicted",
                    "measured",
                    "linear",
                    "speedup",
                    "default",
                    "speedup",
                ],
                split_rows,
            ),  # fmt: skip
        ]
    return "\n".join(lines)


def _where(points: list[VerifiedPoint]) -> str:
    from ..units import format_size

    return ", ".join(f"P={v.ranks} {format_size(v.size)}" for v in points[:10])
