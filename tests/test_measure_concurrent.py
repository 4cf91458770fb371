"""Zhu section 5 experiments: the plan, the stopping rule and verdicts (pure), and one
run under mpirun on 4 ranks."""

from __future__ import annotations

import pytest

from commodel.measure import concurrent as Z
from mpirun import needs_mpi, run


def test_sides_group_ranks_by_host():
    assert Z.sides(["a", "a", "b", "b", "c"]) == ([0, 1], [2, 3], True)
    assert Z.sides(["h"] * 5) == ([0, 1], [2, 3], False)


def test_plan():
    exps = Z.plan([0, 1], [2, 3], None)
    assert [(p, k) for p, k, _ in exps] == [
        ("uni", 1), ("uni", 2), ("in-k-out-1", 1), ("in-k-out-1", 2),
        ("in-k-out-k", 1), ("in-k-out-k", 2),
    ]  # fmt: skip
    assert exps[3][2] == [(2, 0), (3, 1), (0, 2)]  # two in to X, one out of X
    assert len(Z.plan([0, 1], [2, 3], 1)) == 3


def test_zhu_stopping_rule():
    assert not Z.ci_ok([1.0], 0.02)
    assert Z.ci_ok([1.0, 1.0, 1.0], 0.02)
    # s = 0.01, n = 4: the 95% interval is 2 * 1.96 * 0.01 / 2 = 0.0196 wide
    vals = [1 - 0.0122474487, 1 + 0.0122474487, 1.0, 1.0]
    assert Z.ci_ok(vals, 0.0197)
    assert not Z.ci_ok(vals, 0.0195)


def test_verdicts():
    fair = {"pattern": "uni", "k": 2, "bandwidth": [100.0, 110.0]}
    unfair = {"pattern": "uni", "k": 3, "bandwidth": [100.0, 100.0, 40.0]}
    # k = 2 in, 1 out: the outgoing flow gets what an incoming one gets (asymmetric)
    asym = {"pattern": "in-k-out-1", "k": 2, "bandwidth": [470.0, 470.0, 470.0]}
    # ... or the full capacity of the other direction (symmetric sharing)
    sym = {"pattern": "in-k-out-1", "k": 2, "bandwidth": [470.0, 470.0, 940.0]}
    assert Z.verdict([fair, asym]) == {
        "fairness": True,
        "asymmetric": True,
        "out_in_ratio": {2: 1.0},
    }
    v = Z.verdict([fair, unfair, sym])
    assert v["fairness"] is False and v["asymmetric"] is False and v["out_in_ratio"] == {2: 2.0}
    assert Z.verdict([{"pattern": "uni", "k": 1, "bandwidth": [1.0]}])["fairness"] is None


@pytest.mark.mpi
@needs_mpi
def test_concurrent_on_four_ranks(tmp_path):
    res = run(4, "measure", "concurrent", "--db", str(tmp_path / "r.duckdb"), "--size", "1MiB",
              "--max-reps", "4", "--quiet")  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert "one host: loopback" in res.stdout
    assert "fairness (Zhu 5.1): " in res.stdout and "asymmetric property (Zhu 5.2): " in res.stdout
    rows = [line.split() for line in res.stdout.splitlines() if line.startswith(("uni", "in-k"))]
    assert [(r[0], int(r[1]), len(r) - 2) for r in rows] == [
        ("uni", 1, 1), ("uni", 2, 2), ("in-k-out-1", 1, 2), ("in-k-out-1", 2, 3),
        ("in-k-out-k", 1, 2), ("in-k-out-k", 2, 4),
    ]  # fmt: skip
    assert all(float(x) > 0 for r in rows for x in r[2:])
