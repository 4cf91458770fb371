"""``commodel advise --verify``: the arithmetic on hand-made samples, and the measurement under
a real mpirun over loopback (default decision, our rules file, every forced algorithm, the
gather split; resumed after a kill)."""

from __future__ import annotations

import csv
import json
import math
import subprocess
import sys
from dataclasses import replace

import pytest

from commodel.advise.verify import (
    VerifiedPoint,
    fieller_ratio,
    run_spread,
    targets,
    verified_point,
)
from commodel.measure.collective import launch_argv, split_sizes
from mpirun import ROOT, commodel, connect_when_released, env, kill_group, needs_mpi


def test_fieller_with_an_exact_denominator_is_the_t_interval_of_the_numerator():
    # num: mean 3, s^2 = 2, variance of the mean 1; den exact 1: df = 1, t = 12.7062
    ratio, lo, hi = fieller_ratio([2.0, 4.0], [1.0, 1.0, 1.0, 1.0])
    assert ratio == 3.0
    assert lo == pytest.approx(3.0 - 12.706204736, rel=1e-9)
    assert hi == pytest.approx(3.0 + 12.706204736, rel=1e-9)


def test_fieller_ends_solve_the_quadratic():
    # a = 11, va = 1; b = 5, vb = 0.01; ratio 2.2; Welch df at R = 2.2 with wb = 2.2^2 vb:
    # (1 + 0.0484)^2 / (1 + 0.0484^2)
    from scipy.stats import t

    ratio, lo, hi = fieller_ratio([10.0, 12.0], [4.9, 5.1])
    assert ratio == pytest.approx(2.2)
    t2 = t.ppf(0.975, 1.0484**2 / (1 + 0.0484**2)) ** 2
    for r in (lo, hi):
        assert (11 - 5 * r) ** 2 == pytest.approx(t2 * (1 + 0.01 * r * r), rel=1e-9)
    assert lo < 2.2 < hi


def test_fieller_is_unbounded_when_the_denominator_may_be_zero():
    # b = 1, vb = 0.81: b^2 - t^2 vb < 0 for any t >= 1.96
    assert fieller_ratio([1.0, 1.2], [0.1, 1.9]) == (pytest.approx(1.1), None, None)
    assert fieller_ratio([1.0], [1.0, 2.0])[1:] == (None, None)


def test_run_spread_is_the_median_deviation():
    assert run_spread([(1.1, 1.0), (0.9, 1.0), (1.0, 1.0), (1.3, 1.0)]) == pytest.approx(0.1)
    assert run_spread([(2.0, 1.0), (1.0, 1.0), (1.5, 1.0)]) == pytest.approx(0.5)
    assert run_spread([]) == 0.0


def point(default, ours, forced, chosen, lo=None, hi=None, size=1024):
    return VerifiedPoint(4, size, default, ours, forced, chosen, default / ours, lo, hi)


def test_point_rank_gap_and_within():
    v = point(10.0, 6.0, {1: 5.0, 2: 6.0, 3: 8.0}, 2)
    assert (v.best, v.best_s, v.chosen_rank) == (1, 5.0, 2)
    assert v.gap_recovered() == pytest.approx(0.8)  # (10 - 6) / (10 - 5)
    assert v.within is False  # 6 > 1.05 * 5
    assert point(10.0, 6.0, {1: 5.0, 2: 5.2}, 2).within is True
    assert point(4.0, 6.0, {1: 5.0, 2: 6.0}, 2).gap_recovered() is None  # default is fastest
    assert point(10.0, 6.0, {1: 5.0}, 7).chosen_rank is None


def test_algorithms_alike_count_as_one():
    # two-rack-16, allreduce 128 KiB: ring (4) 48.4 ms, segmented_ring (5) 42.6, one function
    # of Open MPI's without a segment size; the default runs rabenseifner (6), 74.2 ms
    v = point(74.2, 48.4, {4: 48.4, 5: 42.6, 6: 75.4}, 4)
    assert (v.best, v.within, v.alike_best) == (5, False, False)
    v.alike = (frozenset({4, 5}),)
    assert (v.best, v.chosen_rank, v.within, v.alike_best) == (5, 2, True, True)
    assert v.gap_recovered() == pytest.approx((74.2 - 48.4) / (74.2 - 42.6))
    # the default running the best's schedule leaves no gap to recover
    v.default_alg = 4
    assert v.gap_recovered() is None
    assert point(74.2, 75.4, {4: 48.4, 5: 42.6, 6: 75.4}, 6).same_run(6, 6)


def test_the_default_decisions_own_call_is_reported_not_judged_for_target_a():
    # ours 0.62 of the default with no interval: a failure, unless our rules run the
    # default's own call (then it is two mpiruns of one call)
    v = point(0.634, 1.027, {4: 0.64, 2: 0.61}, 4, size=1024)
    assert [p.size for p in targets([v], spread=0.057).slower] == [1024]
    v.default_call = True
    t = targets([v], spread=0.057)
    assert (t.slower, [p.size for p in t.unjudged], t.a_ok) == ([], [1024], True)


def test_runs_default_call():
    from commodel.advise.advice import Candidate, Point, runs_default_call

    kept = Candidate(4, "linear_sync", "alltoall-linear-sync")
    pt = Point(8, 1024, [Candidate(4, "linear_sync", "alltoall-linear-sync")], default=kept)
    assert runs_default_call("alltoall", pt, kept, 4)  # the advice kept the default
    assert runs_default_call("alltoall", pt, pt.candidates[0], 4)  # chose its algorithm
    assert not runs_default_call("alltoall", pt, Candidate(2, "pairwise", "x"), 4)
    # bcast pipeline chosen: our rule gives it 8 KiB segments, the fixed decision none
    pipe = Point(8, 65536, [Candidate(3, "pipeline", "bcast-pipeline")])
    pipe.default = Candidate(3, "pipeline", "bcast-pipeline")
    assert not runs_default_call("bcast", pipe, pipe.candidates[0], 3)
    assert runs_default_call("bcast", pipe, pipe.default, 3)


def test_alike_classes_are_the_generated_schedules_open_mpi_falls_back_to():
    from commodel.advise.advice import alike_classes

    # segmented_ring without a segment size is ring
    assert alike_classes("allreduce", 16, 131072, range(1, 7)) == [frozenset({4, 5})]
    # neighbor exchange needs an even P: with 7 ranks Open MPI runs ring
    assert frozenset({4, 5}) in alike_classes("allgather", 7, 1024, range(1, 7))
    assert all(5 not in c for c in alike_classes("allgather", 8, 1024, range(1, 7)))
    # no generator, or a refusal (two_proc needs 2 ranks), is in no class
    assert alike_classes("allgather", 8, 1024, [6, 99]) == []


def test_verified_point_means_and_speedup():
    v = verified_point(8, 4096, [2.0, 4.0], [1.0, 1.0, 1.0, 1.0], {1: [1.0, 3.0], 2: []}, 1)
    assert (v.default_s, v.ours_s, v.forced_s, v.speedup) == (3.0, 1.0, {1: 2.0}, 3.0)
    assert v.speedup_hi == pytest.approx(3.0 + 12.706204736, rel=1e-9)


def test_targets():
    pts = [
        # ours = forced(chosen) exactly; default slower than best by 50%: gap recovered 100%
        point(15.0, 10.0, {1: 10.0, 2: 12.0}, 1, lo=1.3, hi=1.7, size=1),
        # ours 20% slower than forced(chosen) 10: spread candidate 0.2; default best
        point(10.0, 12.0, {1: 10.0, 2: 11.0}, 1, lo=0.7, hi=0.95, size=2),
        # chosen 2 is 30% off the best; default 20 vs best 10: recovered (20 - 16) / 10
        point(20.0, 16.0, {1: 10.0, 2: 13.0}, 2, lo=1.1, hi=1.4, size=3),
    ]
    # spread: median of |10/10 - 1|, |12/10 - 1|, |16/13 - 1| = median(0, 0.2, 0.2308) = 0.2
    t = targets(pts)
    assert t.spread == pytest.approx(0.2)
    assert t.a_ok  # point 2's interval reaches 0.95 >= 0.8
    assert [p.size for p in t.gap_points] == [1, 3]
    assert [p.size for p in t.gap_short] == [3]  # 40% < 50%
    assert (t.within, t.points, t.c_ok) == (2, 3, False)  # 2/3 < 80%
    # where the best forced algorithm is the one the default runs, there is no gap to recover
    pts[2].default_alg = 1
    assert pts[2].gap_recovered() is None
    assert [p.size for p in targets(pts).gap_points] == [1]
    pts[2].default_alg = 2
    assert [p.size for p in targets(pts).gap_short] == [3]
    pts[2].default_alg = None
    strict = targets(pts, spread=0.01)
    assert [p.size for p in strict.slower] == [2]  # 0.95 < 0.99
    assert not strict.a_ok


def test_measured_rules_name_the_best_where_the_default_is_slower_beyond_the_spread():
    from commodel.advise.rules import format_rules, parse_rules
    from commodel.advise.verify_runs import rules_from_measured, rules_pick

    def pt(size, default, forced, default_alg, alike=()):
        v = VerifiedPoint(8, size, default, forced[default_alg], forced, default_alg, 1.0, 0.9, 1.1)
        v.default_alg, v.alike, v.default_call = default_alg, tuple(alike), True
        return v

    ring = (frozenset({4, 5}),)
    pts = [
        # the default's recursive doubling 14% slower than nonoverlapping: departs
        pt(1024, 454.0, {2: 399.0, 3: 460.0, 6: 650.0}, 3),
        # the default runs the best: kept
        pt(2048, 583.0, {2: 700.0, 3: 583.0, 6: 600.0}, 3),
        # rabenseifner 1% faster: within the spread s = 2% (every ours = forced(chosen) + 2%)
        pt(8192, 1.01, {3: 1.5, 6: 1.0}, 6),
        # segmented_ring and ring are one function here; the lower number is named
        pt(65536, 11.0, {4: 10.1, 5: 10.0, 6: 11.0}, 6, ring),
        # ... and at the next size the one named before, though the other measured faster
        pt(131072, 32.0, {4: 20.0, 5: 19.9, 6: 32.0}, 6, ring),
    ]
    for v in pts:
        v.ours_s = 1.02 * v.forced_s[v.chosen]
    table, depart = rules_from_measured("allreduce", pts)
    assert [v.size for v in depart] == [1024, 65536, 131072]
    assert not [p for p in parse_rules(format_rules([table]).encode()).problems]
    got = {v.size: rules_pick("allreduce", [table], 8, v.size, v.default_alg) for v in pts}
    assert got == {1024: (2, False), 2048: (3, True), 8192: (6, True), 65536: (4, False),
                   131072: (4, False)}  # fmt: skip
    # no rule (0: the default decision) below 1 KiB, between the departures and past 128 KiB
    assert [(r.msg_size, r.algorithm) for r in table.comm_rules[0].rules] == [
        (0, 0), (1024, 2), (2048, 0), (65536, 4), (131073, 0)
    ]  # fmt: skip
    for size in (8, 512, 1 << 20):
        assert rules_pick("allreduce", [table], 8, size, 3) == (3, True)


def test_measured_rules_refine_a_given_file_at_the_sizes_measured_only():
    from commodel.advise.rules import format_rules, parse_rules
    from commodel.advise.verify_runs import rules_from_measured

    # the model's allreduce rules of the margin pass on 8 ranks, and a table for 16
    base = parse_rules(b"1 2 2 8 3 0 3 0 0 2048 6 0 0 32768 4 0 0 16 1 0 3 0 0").tables

    def pt(size, default, forced):
        v = VerifiedPoint(8, size, default, forced[3], forced, 3, 1.0, 0.9, 1.1)
        v.ours_s, v.default_alg = 1.01 * forced[3], 3  # spread s = 1%
        return v

    pts = [  # six rounds on two-rack-8: nonoverlapping at 1 KiB, rabenseifner at 4 KiB
        pt(1024, 536.0, {2: 468.0, 3: 514.0, 6: 700.0}),
        pt(2048, 675.0, {2: 765.0, 3: 650.0, 6: 750.0}),
        pt(4096, 1187.0, {2: 1530.0, 3: 1165.0, 6: 897.0}),
    ]
    table, depart = rules_from_measured("allreduce", pts, base)
    assert [v.size for v in depart] == [1024, 4096]
    eight, sixteen = table.comm_rules
    # below 1 KiB and past 4 KiB the given file's rules; rabenseifner from 4 KiB runs on
    # into the file's own rabenseifner up to its ring at 32 KiB
    assert [(r.msg_size, r.algorithm) for r in eight.rules] == [
        (0, 3), (1024, 2), (2048, 0), (4096, 6), (32768, 4)
    ]  # fmt: skip
    assert (sixteen.comm_size, [(r.msg_size, r.algorithm) for r in sixteen.rules]) == (
        16, [(0, 3)]
    )  # fmt: skip
    text = format_rules([table])
    assert not parse_rules(text.encode()).problems
    assert "2048 0 0 0  # from 2048 B: no rule (Open MPI's default decision)" in text


def test_rules_pick_tells_the_default_decisions_own_call():
    from commodel.advise.rules import parse_rules
    from commodel.advise.verify_runs import rules_pick

    text = b"1 7 1 8 3 0 6 0 0 1024 3 0 8192 65536 0 0 0 0"  # bcast on 8 ranks
    [table] = parse_rules(text).tables
    # from 0: binomial, faninout 0 and segsize 0 as a kept default is written
    assert rules_pick("bcast", [table], 8, 512, 6) == (6, True)
    assert rules_pick("bcast", [table], 8, 512, 7) == (6, False)
    # pipeline with 8 KiB segments is not the fixed decision's pipeline call
    assert rules_pick("bcast", [table], 8, 4096, 3) == (3, False)
    # algorithm 0, and a collective without rules, leave the call to the fixed decision
    assert rules_pick("bcast", [table], 8, 1 << 20, 3) == (3, True)
    assert rules_pick("allreduce", [table], 8, 1024, 3) == (3, True)


def test_use_rules_and_measured_rules_errors_exit_2(tmp_path):
    base = ["advise", "--platform", "nomura2007", "--collective", "allreduce", "--ranks", "4"]
    res = commodel(*base, "--measured-rules", str(tmp_path / "m.rules"))
    assert res.returncode == 2 and "--measured-rules needs --verify DB" in res.stderr
    db = str(tmp_path / "v.duckdb")
    res = commodel(*base, "--use-rules", str(tmp_path / "none.rules"), "--verify", db)
    assert res.returncode == 2 and "none.rules: no such rules file" in res.stderr
    bcast = tmp_path / "bcast.rules"
    bcast.write_text("1 7 1 4 1 0 6 0 0\n")
    res = commodel(*base, "--use-rules", str(bcast), "--verify", db)
    assert res.returncode == 2 and "no rules for allreduce (collective id 2)" in res.stderr
    bcast.write_text("1 2 1 4 1 0 9 0 0\n")  # allreduce has algorithms 0..6
    res = commodel(*base, "--use-rules", str(bcast), "--verify", db)
    assert res.returncode == 2 and "Open MPI 4.1.4 would not use it" in res.stderr
    assert "Traceback" not in res.stderr and not (tmp_path / "v.duckdb").exists()


@pytest.mark.mpi
@needs_mpi
def test_verify_a_given_rules_file_and_write_measured_rules(tmp_path):
    given = tmp_path / "given.rules"
    # allreduce on 2 ranks: basic_linear throughout; a comment not UTF-8, which Open MPI
    # reads past (it ended in a UnicodeDecodeError here)
    given.write_bytes(b"1 # one collective, \xff\n2 1 2 1 0 1 0 0\n")
    db, measured = tmp_path / "u.duckdb", tmp_path / "measured.rules"
    res = commodel(
        "advise", "--platform", "nomura2007", "--collective", "allreduce", "--ranks", "2",
        "--sizes", "1KiB,64KiB", "--verify", str(db), "--mpirun", _mpirun(), "--max-reps", "5",
        "--quiet", "--use-rules", str(given), "--measured-rules", str(measured), timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    copy = tmp_path / "u.rules.txt"  # measured as our rules: a copy of the given file
    assert copy.read_bytes() == given.read_bytes()
    camps, _ = campaigns(db)
    assert [o["rules_file"] for _i, o, _s in camps if o["rules_file"]] == [str(copy)]
    with open(tmp_path / "u.verify.csv") as handle:
        table = list(csv.DictReader(handle))
    assert [(r["size"], r["chosen"]) for r in table] == [("1024", "1"), ("65536", "1")]
    assert "measured rules: " in res.stdout and "--use-rules" in res.stdout
    assert commodel("advise", "--check-rules", str(measured)).returncode == 0
    from commodel.advise.advice import alike_classes
    from commodel.advise.rules import read_rules
    from commodel.advise.verify_runs import rules_pick

    tables = read_rules(str(measured)).tables
    for r in table:  # the measured best (or one that runs its schedule), or the default's call
        size, best = int(r["size"]), int(r["best"])
        pick = rules_pick("allreduce", tables, 2, size, int(r["default_alg"]))
        alike = next(
            (c for c in alike_classes("allreduce", 2, size, range(7)) if best in c), {best}
        )
        assert pick in {(a, False) for a in alike} | {(int(r["default_alg"]), True)}


def test_launcher_prefix_with_a_trailing_double_dash():
    mca = [("coll_tuned_use_dynamic_rules", "1")]
    assert launch_argv(["commodel", "cluster", "mpirun", "--"], 8, mca) == [
        "commodel", "cluster", "mpirun", "-n", "8",
        "--mca", "coll_tuned_use_dynamic_rules", "1", "--",
    ]  # fmt: skip
    assert launch_argv(["mpirun", "--oversubscribe"], 2, []) == [
        "mpirun", "--oversubscribe", "-n", "2",
    ]  # fmt: skip


def test_split_sizes_put_the_remainder_last():
    assert split_sizes(4096, 3) == [1365, 1365, 1366]
    assert split_sizes(10, 1) == [10]


def test_verify_errors_exit_2(tmp_path):
    db = str(tmp_path / "v.duckdb")
    base = ["advise", "--platform", "nomura2007", "--ranks", "4", "--sizes", "1KiB"]
    res = commodel(*base, "--collective", "gather", "--verify", db, "--mpirun", "false")
    assert res.returncode == 2
    assert "launcher failed on 4 ranks (exit 1)" in res.stderr and "Traceback" not in res.stderr
    res = commodel(*base, "--collective", "barrier", "--verify", db)
    assert res.returncode == 2 and "barrier has no message sizes" in res.stderr


def m2o_platform(tmp_path):
    """nomura2007 with escalations from M1(4) = 2000 bytes: the split of 4 KiB is k = 3."""
    path = tmp_path / "m2o.yaml"
    text = (ROOT / "examples" / "platforms" / "nomura2007.yaml").read_text()
    path.write_text(text + "\nmany_to_one:\n  n: [3, 4]\n  M1: [4000, 2000]\n")
    return str(path)


def _mpirun() -> str:
    import os

    return "mpirun --oversubscribe" + (" --allow-run-as-root" if os.geteuid() == 0 else "")


def campaigns(db):
    con = connect_when_released(db)
    try:
        camps = con.execute("SELECT id, options, status FROM campaigns ORDER BY id").fetchall()
        rows = con.execute("SELECT campaign, size_bytes, value_s FROM samples").fetchall()
    finally:
        con.close()
    means: dict[tuple[int, int], list[float]] = {}
    for cid, m, v in rows:
        means.setdefault((cid, m), []).append(v)
    return [(i, json.loads(o), s) for i, o, s in camps], means


@pytest.mark.mpi
@needs_mpi
def test_verify_gather_on_4_ranks_with_the_split(tmp_path):
    db = tmp_path / "v.duckdb"
    res = commodel(
        "advise", "--platform", m2o_platform(tmp_path), "--collective", "gather", "--ranks", "4",
        "--sizes", "1KiB,4KiB", "--verify", str(db), "--mpirun", _mpirun(), "--max-reps", "5",
        "--quiet", "--plot", str(tmp_path / "v.png"), timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    rules = str(tmp_path / "v.rules.txt")
    camps, samples = campaigns(db)
    got = [(o["algorithm"], o["rules_file"], o.get("splits"), s) for _i, o, s in camps]
    assert got == [
        (0, None, None, "complete"),
        (0, rules, None, "complete"),
        (1, None, None, "complete"),
        (2, None, None, "complete"),
        (3, None, None, "complete"),
        (1, None, 3, "complete"),  # 4 KiB as 3 linear sub-gathers
    ]
    assert camps[5][1]["sizes"] == [4096] and camps[5][1]["split_sync"] == "barrier"
    assert commodel("advise", "--check-rules", rules).returncode == 0
    with open(tmp_path / "v.verify.csv") as handle:
        table = list(csv.DictReader(handle))
    assert [(r["size"], r["split_k"]) for r in table] == [("1024", ""), ("4096", "3")]
    # Open MPI 4.1.4's fixed decision for gather on 4 ranks: basic_linear from 1 KiB to 8 KiB
    assert [(r["default_alg"], r["default_alg_name"]) for r in table] == [("1", "basic_linear")] * 2
    ids = {key: camps[k][0] for k, key in enumerate([0, "rules", 1, 2, 3, "split"])}

    def mean(key, m):
        xs = samples[(ids[key], m)]
        return sum(xs) / len(xs)

    for r in table:
        m = int(r["size"])
        d, o = mean(0, m), mean("rules", m)
        assert float(r["default_s"]) == pytest.approx(d, rel=1e-8)
        assert float(r["speedup"]) == pytest.approx(d / o, rel=1e-8)
        best = min((mean(a, m), a) for a in (1, 2, 3))
        assert (int(r["best"]), float(r["best_s"])) == (best[1], pytest.approx(best[0], rel=1e-8))
        assert r["chosen"] == "1"  # the advice on this platform: basic_linear everywhere
    assert float(table[1]["split_s"]) == pytest.approx(mean("split", 4096), rel=1e-8)
    # the plain linear gather the split is measured against: basic_linear forced
    assert float(table[1]["linear_s"]) == pytest.approx(mean(1, 4096), rel=1e-8)
    assert "measured against the plain linear gather" in res.stdout
    assert "speedup [95% CI]" in res.stdout and "(c) chosen algorithm" in res.stdout
    assert "default runs" in res.stdout and "1 basic_linear" in res.stdout
    assert (tmp_path / "v.png").stat().st_size > 0


@pytest.mark.mpi
@needs_mpi
def test_verify_resumes_after_a_kill(tmp_path):
    db = tmp_path / "k.duckdb"
    args = [
        sys.executable, "-m", "commodel", "advise", "--platform", "nomura2007", "--collective",
        "gather", "--ranks", "2", "--sizes", "1KiB,2KiB", "--verify", str(db), "--mpirun",
        _mpirun(), "--max-reps", "5", "--quiet",
    ]  # fmt: skip
    proc = subprocess.Popen(
        args, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    for line in proc.stdout:  # the second run (our rules) has started
        if line.startswith("gather rules"):
            break
    kill_group(proc)
    first, _ = campaigns(db)
    assert first[0][1]["algorithm"] == 0 and first[0][2] == "complete"
    res = subprocess.run(args, env=env(), capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert f"gather 0 default: campaign {first[0][0]} is complete, kept" in res.stdout
    camps, _ = campaigns(db)
    # one campaign per run: default, rules, 1, 2, 3 (an interrupted one resumed, not doubled)
    assert len(camps) == 5 and all(s == "complete" for _i, _o, s in camps)
    assert camps[0][0] == first[0][0]
    table = (tmp_path / "k.verify.csv").read_text().splitlines()
    assert len(table) == 3 and not math.isnan(float(table[1].split(",")[3]))


def test_advise_gather_split_from_m1_and_forced(tmp_path):
    from commodel import collective, predict
    from commodel.advise.advice import advise
    from commodel.errors import CommodelError
    from commodel.platform import load_platform

    plat = load_platform(m2o_platform(tmp_path))
    adv = advise(plat, "gather", [3, 4], [1024, 4096], model="loggops", jobs=1)
    got = {
        (pt.ranks, pt.size): (pt.split.k, pt.split.m1) if pt.split else None for pt in adv.points
    }
    # M1(3) = 4000, M1(4) = 2000 and no measured sizes (a hand-written section): the
    # paper's k = ceil(M / M1) from M >= M1 on
    assert got == {(3, 1024): None, (3, 4096): (2, 4000), (4, 1024): None, (4, 4096): (3, 2000)}
    split = next(pt.split for pt in adv.points if (pt.ranks, pt.size) == (4, 4096))
    sched = collective("gather-split", 4, 4096, splits=3)
    assert split.time_s == predict(sched, plat, model="loggops").makespan_s
    # M2: from there the escalations have stopped (large messages), so no split
    plat.sections["many_to_one"]["M2"] = 4096
    adv = advise(plat, "gather", [4], [1024, 4095, 4096], model="loggops", jobs=1)
    assert [pt.split.k if pt.split else None for pt in adv.points] == [None, 3, None]
    forced = advise(plat, "gather", [4], [1024], model="loggops", jobs=1, splits=5)
    assert (forced.points[0].split.k, forced.points[0].split.m1) == (5, None)
    # With the measured sizes (as calibrate writes them): sub-messages of at most Ms, the
    # largest measured size below M1(P) (M1(4) = 2000: Ms = 1000, so 4 KiB is cut in 5;
    # M1(3) = 4000: Ms = 2000, k = 3); no measured size below M1: no split.
    plat.sections["many_to_one"].update(M2=None, sizes=[1000, 2000, 4000])
    adv = advise(plat, "gather", [3, 4], [4096], model="loggops", jobs=1)
    assert [(pt.split.k, pt.split.small) for pt in adv.points] == [(3, 2000), (5, 1000)]
    # a size that escalated with fewer processes is no safe size for more: M1(3) = 2000
    # bounds P = 4 too (Ms = 1000, k = 5 where M1(4) = 4000 alone gave Ms = 2000, k = 3)
    plat.sections["many_to_one"]["M1"] = [2000, 4000]
    adv = advise(plat, "gather", [4], [4096], model="loggops", jobs=1)
    assert [(pt.split.k, pt.split.m1, pt.split.small) for pt in adv.points] == [(5, 4000, 1000)]
    plat.sections["many_to_one"]["M1"] = [4000, 2000]
    plat.sections["many_to_one"]["sizes"] = [2000, 4000]
    adv = advise(plat, "gather", [3, 4], [4096], model="loggops", jobs=1)
    assert [(pt.split.k, pt.split.small) if pt.split else None for pt in adv.points] == [
        (3, 2000),
        None,
    ]
    with pytest.raises(CommodelError, match="only gather splits"):
        advise(plat, "bcast", [4], [1024], splits=2)


def test_measure_collective_splits_only_gather():
    from commodel.errors import CommodelError
    from commodel.measure.collective import validate_options

    opts = validate_options({"collective": "gather", "splits": 3}, environ={})
    assert (opts["splits"], opts["split_sync"]) == (3, "barrier")
    assert "splits" not in validate_options({"collective": "gather", "splits": 1}, environ={})
    with pytest.raises(CommodelError, match="only gather splits"):
        validate_options({"collective": "bcast", "splits": 2}, environ={})


def test_cluster_mpirun_reads_our_options_as_mpirun_arguments():
    """The argv --verify builds with the prefix 'commodel cluster mpirun --': cluster
    mpirun's own parser passes -n and --mca to mpirun and runs what follows the --."""
    from commodel.cli.cluster import MPIRUN_USAGE, _mpirun_parser, _options_and_command

    mca = [("coll_tuned_use_dynamic_rules", "1"), ("coll_tuned_gather_algorithm", "2")]
    argv = launch_argv(["commodel", "cluster", "mpirun", "--"], 16, mca) + ["python3", "-V"]
    ns, cmd = _options_and_command(_mpirun_parser(), argv[3:], MPIRUN_USAGE, keep_extra=True)
    assert ns.extra == ["-n", "16", "--mca", "coll_tuned_use_dynamic_rules", "1",
                        "--mca", "coll_tuned_gather_algorithm", "2"]  # fmt: skip
    assert cmd == ["python3", "-V"]


@pytest.mark.mpi
@needs_mpi
def test_verify_rounds_judge_every_run_by_its_per_mpirun_means(tmp_path):
    db = tmp_path / "r.duckdb"
    args = ["advise", "--platform", "nomura2007", "--collective", "gather", "--ranks", "2",
            "--sizes", "1KiB,2KiB", "--verify", str(db), "--mpirun", _mpirun(),
            "--max-reps", "5", "--quiet", "--rounds", "3"]  # fmt: skip
    res = commodel(*args, timeout=600)
    assert res.returncode == 0, res.stderr
    camps, samples = campaigns(db)
    rules = str(tmp_path / "r.rules.txt")
    # round by round: the default, the rules, every forced algorithm; then again twice
    got = [(o["algorithm"], o["rules_file"], o.get("round"), s) for _i, o, s in camps]
    one = [(0, None), (0, rules), (1, None), (2, None), (3, None)]
    assert got == [(a, f, r, "complete") for r in (None, 1, 2) for a, f in one]
    with open(tmp_path / "r.verify.csv") as handle:
        table = list(csv.DictReader(handle))
    assert len(table) == 2

    def judged(run: int, m: int) -> list[float]:  # the run's mean in each of its 3 mpiruns
        xs = [samples[(camps[run + 5 * r][0], m)] for r in range(3)]
        return [sum(x) / len(x) for x in xs]

    for r in table:
        m = int(r["size"])
        d, o = judged(0, m), judged(1, m)
        ratio, lo, hi = fieller_ratio(d, o)
        assert float(r["default_s"]) == pytest.approx(sum(d) / 3, rel=1e-8)
        assert float(r["ours_s"]) == pytest.approx(sum(o) / 3, rel=1e-8)
        assert float(r["speedup"]) == pytest.approx(ratio, rel=1e-8)
        if lo is not None:
            assert float(r["speedup_lo"]) == pytest.approx(lo, rel=1e-8)
            assert float(r["speedup_hi"]) == pytest.approx(hi, rel=1e-8)
        best = min(range(2, 5), key=lambda k: sum(judged(k, m)))
        assert float(r["best_s"]) == pytest.approx(sum(judged(best, m)) / 3, rel=1e-8)
        assert r["rounds"] == "3"
    report = res.stdout
    assert "every run measured in 3 mpiruns" in report
    # run again: every campaign, of every round, is complete and kept
    again = commodel(*args, timeout=600)
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("is complete, kept") == 15
    assert len(campaigns(db)[0]) == 15


def test_run_samples_are_the_repetitions_or_the_per_mpirun_means():
    from commodel.advise.verify import run_samples

    assert run_samples([[1.0, 2.0, 6.0]]) == [1.0, 2.0, 6.0]
    assert run_samples([[1.0, 3.0], [], [4.0]]) == [2.0, 4.0]
    # three mpiruns whose means differ: the interval sees 3 samples, not 30
    one = [[1.0 + 0.001 * i for i in range(10)], [1.2] * 10, [1.1] * 10]
    ours = [[1.0] * 10] * 3
    _, lo, hi = fieller_ratio(run_samples(one), run_samples(ours))
    _, plo, phi = fieller_ratio([x for r in one for x in r], [x for r in ours for x in r])
    assert lo < plo and hi > phi


def test_measure_collective_records_a_round_only_above_0():
    from commodel.errors import CommodelError
    from commodel.measure.collective import validate_options

    base = {"collective": "bcast", "sizes": [1024]}
    assert "round" not in validate_options({**base, "round": 0}, environ={})
    assert validate_options({**base, "round": 2}, environ={})["round"] == 2
    with pytest.raises(CommodelError, match="--round -1"):
        validate_options({**base, "round": -1}, environ={})


def test_advise_gather_predicts_escalations_with_the_incast_rule(tmp_path):
    """A platform with escalation levels: every gather time is the mean of the incast rule's
    runs, so the plain linear gather pays its escalations and the split does not."""
    import numpy as np

    from commodel import collective, predict
    from commodel.advise.advice import ESCALATION_SAMPLES, advise
    from commodel.errors import CommodelError
    from commodel.fit.manytoone import spline_surface
    from commodel.lmo.incast import predict_samples
    from commodel.platform import load_platform

    plat = load_platform(m2o_platform(tmp_path))
    # n = 4 (3 senders): escalation certain at 2000 B and above, to a level of 0.25 s
    surface = spline_surface([3, 4], [1000, 2000, 4000], np.array([[0, 0, 0.5], [0, 1, 1]]))
    plat.sections["many_to_one"].update(
        sizes=[1000, 2000, 4000], levels=[0.25], probability=[surface]
    )
    adv = advise(plat, "gather", [4], [4096], model="plogp", jobs=1)
    assert adv.samples == ESCALATION_SAMPLES == 32
    [pt] = adv.points
    linear = next(c for c in pt.candidates if c.number == 1)
    runs = predict_samples(collective("gather-basic-linear", 4, 4096), plat, "plogp", 32)
    assert linear.time_s == runs.mean_s and runs.escalated_runs == 32
    assert linear.time_s >= 0.25  # the level: nothing arrives before the episode start + t_1
    # the split: Ms = 1000 B, so k = 5 sub-gathers of 819 B (below M1(4)): never escalated
    assert (pt.split.k, pt.split.small) == (5, 1000)
    one = predict(collective("gather-split", 4, 4096, splits=5), plat, model="plogp")
    assert pt.split.time_s == pytest.approx(one.makespan_s, rel=1e-12)
    assert pt.split.time_s < 0.25 <= linear.time_s
    from commodel.report.advise_plot import plot_advice

    plot_advice(adv, str(tmp_path / "advice.png"))  # the split drawn beside the algorithms
    assert (tmp_path / "advice.png").stat().st_size > 0
    # samples=0, loggops (no incast rule), and other collectives: one run without the rule
    for kwargs in ({"model": "plogp", "samples": 0}, {"model": "loggops"}):
        again = advise(plat, "gather", [4], [4096], jobs=1, **kwargs)
        plain = predict(collective("gather-basic-linear", 4, 4096), plat, model=kwargs["model"])
        assert again.samples == 0
        assert next(c for c in again.points[0].candidates if c.number == 1).time_s == (
            plain.makespan_s
        )
    assert advise(plat, "bcast", [4], [4096], model="plogp", jobs=1).samples == 0
    with pytest.raises(CommodelError, match="--samples -1"):
        advise(plat, "gather", [4], [4096], model="plogp", samples=-1)


def test_ran_names_the_algorithms_whose_messages_a_call_sent():
    """advice.ran: the traffic matrix of one algorithm's schedule names it (and the
    algorithms alike to it there), a matrix no schedule sends names none."""
    from commodel.advise.advice import candidate_schedule, ran
    from commodel.measure.traffic import schedule_traffic
    from commodel.mpis import get

    algs = {n: g for n, _a, g in get("openmpi-5.0").algorithms["allreduce"] if g}
    ring = schedule_traffic(candidate_schedule("allreduce", 4, algs[4], 4, 65536))
    assert 4 in ran("allreduce", 4, 65536, ring, mpi="openmpi-5.0")
    assert 3 not in ran("allreduce", 4, 65536, ring, mpi="openmpi-5.0")
    rd = schedule_traffic(candidate_schedule("allreduce", 3, algs[3], 4, 1024))
    assert ran("allreduce", 4, 1024, rd, mpi="openmpi-5.0") == [3]
    nothing = [[(0, 0)] * 4 for _ in range(4)]
    assert ran("allreduce", 4, 1024, nothing, mpi="openmpi-5.0") == []
    from commodel.advise.verify import VerifiedPoint

    point = VerifiedPoint(4, 1024, 1.0, 1.0, {3: 1.0}, 3, 1.0, None, None)
    assert point.fired is None
    assert replace(point, ran=(3,)).fired and not replace(point, ran=(4,)).fired
    alike = replace(point, ran=(5,), alike=(frozenset({3, 5}),))
    assert alike.fired


def test_the_two_proc_check_reads_the_algorithm_as_the_runs_mpi_numbers_it():
    """MPICH's alltoall 5 is scattered, Open MPI's two_proc: a forced MPICH run on 8 ranks
    must not be refused as Open MPI's two_proc (advise --verify --mpi mpich failed so)."""
    from commodel.measure.collective import label_of, mpich_var

    assert label_of("alltoall", 5, {mpich_var("alltoall"): "scattered"}) == "scattered"
    assert label_of("alltoall", 5, {}) == "two_proc"


def test_ran_reads_the_kernels_byte_counts_of_intel_mpi():
    """Under Intel MPI the kernel counted the bytes (messages unknown, the library's headers
    included): the preset whose generator's bytes they are, plus at most HEADER_BYTES a
    message, ran. Measured on the emulated cluster (5 hosts, one rank each, 8 KiB allreduce,
    I_MPI_ADJUST_ALLREDUCE=1 and =2; python -m commodel.cluster.sockets)."""
    from commodel.advise.advice import ran
    from commodel.measure.traffic import HEADER_BYTES, traffic_fits

    def kernel(rows):
        return [[(None, b) for b in row] for row in rows]

    rd = kernel([[0, 8264, 0, 0, 0], [8264, 0, 8264, 8264, 0], [0, 8264, 0, 0, 8264],
                 [0, 8264, 0, 0, 8264], [0, 0, 8264, 8264, 0]])  # fmt: skip
    rsag = kernel([[0, 8264, 0, 0, 0], [8264, 0, 8288, 4192, 0], [0, 8288, 0, 0, 4192],
                   [0, 4192, 0, 0, 8288], [0, 0, 4192, 8288, 0]])  # fmt: skip
    assert ran("allreduce", 5, 8192, rd, mpi="intel-mpi") == [1]
    assert ran("allreduce", 5, 8192, rsag, mpi="intel-mpi") == [2]
    # the payload alone is not enough, nor headers beyond HEADER_BYTES a message
    short = [[(None, max(0, b - 100)) for _c, b in row] for row in rd]
    assert ran("allreduce", 5, 8192, short, mpi="intel-mpi") == []
    want = [[(0, 0), (1, 1000)], [(1, 1000), (0, 0)]]
    assert traffic_fits(want, [[(None, 0), (None, 1000 + 2 * HEADER_BYTES)], [(None, 1000)] * 2])
    assert not traffic_fits(
        want, [[(None, 0), (None, 1001 + 2 * HEADER_BYTES)], [(None, 1000)] * 2]
    )
    # a rank's bytes to itself are not compared (Intel sends its own alltoall block over TCP)
    assert traffic_fits(want, [[(None, 5000), (None, 1000)], [(None, 1000), (None, 0)]])
    # counted by the MPI (messages known): equal, as before
    assert traffic_fits(want, want) and not traffic_fits(want, [[(0, 0), (2, 1000)], want[1]])


def test_the_report_says_what_the_default_runs_only_where_it_is_known():
    # Open MPI 4.1's default runs its fixed decision; Intel MPI's is its own (algorithm 0)
    from commodel.advise.advice import Advice
    from commodel.advise.verify import VerifiedPoint
    from commodel.advise.verify_runs import format_verified

    point = VerifiedPoint(
        ranks=8, size=1024, default_s=1e-3, ours_s=9e-4, forced_s={1: 9e-4, 2: 1.1e-3},
        chosen=1, speedup=1.11, speedup_lo=1.0, speedup_hi=1.2,
    )  # fmt: skip
    for mpi, says in (
        ("openmpi-4.1", "which runs its fixed decision's algorithm"),
        ("intel-mpi", "its own choice, which commodel does not know"),
    ):
        adv = Advice("allreduce", "p.yaml", "tcpflow", [], mpi=mpi)
        head = format_verified("allreduce", [point], adv, {}).splitlines()[0]
        assert says in head, head
