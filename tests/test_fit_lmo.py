"""LMO constants from pair and triple lines: exact recovery on synthetic data."""

from __future__ import annotations

import pytest

from commodel.errors import CommodelError
from commodel.fit import lmo as F
from commodel.measure.lmo import experiments

C = [10e-6, 20e-6, 15e-6, 30e-6]
T = [1e-9, 2e-9, 0.5e-9, 3e-9]
INV_BETA = {(0, 1): 8e-9, (0, 2): 10e-9, (0, 3): 9e-9, (1, 2): 8.5e-9, (1, 3): 12e-9, (2, 3): 7e-9}


def inv_beta(i, j):
    return INV_BETA[(min(i, j), max(i, j))]


def roundtrip(root, dsts, m):
    """The model of measure/lmo.py: pair and one-to-two roundtrips with empty answers."""
    if len(dsts) == 1:
        j = dsts[0]
        return 2 * (C[root] + C[j]) + m * (T[root] + T[j] + inv_beta(root, j))
    fixed = 2 * C[root] + sum(2 * C[d] for d in dsts)
    return fixed + m * (2 * T[root] + max(T[d] + inv_beta(root, d) for d in dsts))


def samples(nodes=4, sizes=(0, 8192, 32768)):
    out = []
    for root, dsts in experiments(nodes):
        for m in sizes:
            for rep in range(3):
                out.append(
                    {
                        "phase": "lmo",
                        "src": root,
                        "extra": {"dsts": list(dsts)},
                        "size_bytes": m,
                        "repetition": rep,
                        "value_s": roundtrip(root, dsts, m),
                    }
                )
    return out  # fmt: skip


def test_experiments_cover_pairs_and_triples():
    exps = experiments(4)
    assert sum(1 for _, d in exps if len(d) == 1) == 12  # ordered pairs
    assert sum(1 for _, d in exps if len(d) == 2) == 12  # 4 roots x C(3, 2)
    assert (0, (1, 2)) in exps and (3, (0, 1)) in exps


def test_solve_recovers_c_t_beta():
    fit = F.fit_lmo(samples(), {"statistic": "median"}, 4)
    assert pytest.approx(C, rel=1e-9) == fit.C
    assert fit.t == pytest.approx(T, rel=1e-6, abs=1e-18)
    for i in range(4):
        assert fit.beta[i][i] is None
        for j in range(4):
            if i != j:
                assert fit.beta[i][j] == pytest.approx(1 / inv_beta(i, j), rel=1e-6)
    sec = F.lmo_section(fit)
    assert list(sec) == ["C", "t", "beta"]
    assert "beta_ij [MB/s]" in F.format_table(fit, ["a", "b", "c", "d"])


def test_line_fit_and_errors():
    a, s = F.line([0, 10, 20], [1.0, 2.0, 3.0])
    assert (a, s) == pytest.approx((1.0, 0.1))
    with pytest.raises(CommodelError, match="at least 3 nodes"):
        F.solve(2, {}, {})
    with pytest.raises(CommodelError, match="fewer than 2 sizes"):
        F.fit_lmo(samples(sizes=(0,)), {}, 4)
    no_triples = [s for s in samples() if len(s["extra"]["dsts"]) == 1]
    with pytest.raises(CommodelError, match="no triple experiment rooted at rank 0"):
        F.fit_lmo(no_triples, {}, 4)


def test_unresolved_links_are_null_and_negative_constants_floored():
    fit = F.solve(3, {(0, 1): (4e-5, 1e-9), (0, 2): (4e-5, 1e-9), (1, 2): (4e-5, 1e-9)},
                  {(0, 1, 2): 5e-9, (1, 0, 2): 1e-9, (2, 0, 1): 1e-9})  # fmt: skip
    # t_0 = 4e-9 > s_01: 1/beta_01 = 1e-9 - 4e-9 - 0 < 0 -> not resolved
    assert fit.t == pytest.approx([4e-9, 0.0, 0.0], abs=1e-20)
    assert fit.beta[0][1] is None and fit.beta[1][2] == pytest.approx(1e9)
    neg = F.LmoFit(
        C=[-1e-6, 1e-6, 0.0], t=[-1e-9, 0.0, 1e-9], beta=[], pair_intercepts={}, pair_slopes={}
    )
    assert F.lmo_section(neg)["C"][0] == 0.0 and F.lmo_section(neg)["t"][0] == 0.0


def test_cover_triples_take_each_other_node_once_per_root():
    for n in (3, 4, 9, 12):
        exps = experiments(n, "cover")
        assert sum(1 for _, d in exps if len(d) == 1) == n * (n - 1)  # every ordered pair
        triples = [(r, d) for r, d in exps if len(d) == 2]
        assert len(triples) == n * ((n - 1) // 2)
        for root in range(n):
            mine = [x for r, d in triples if r == root for x in d]
            assert root not in mine and len(mine) == len(set(mine)) == 2 * ((n - 1) // 2)
    assert len([d for _, d in experiments(9, "all") if len(d) == 2]) == 9 * 28


def test_cover_triples_recover_c_t_beta():
    out = [
        {"phase": "lmo", "src": root, "extra": {"dsts": list(dsts)}, "size_bytes": m,
         "repetition": 0, "value_s": roundtrip(root, dsts, m)}
        for root, dsts in experiments(4, "cover")
        for m in (0, 8192, 32768)
    ]  # fmt: skip
    fit = F.fit_lmo(out, {"statistic": "median"}, 4)
    assert pytest.approx(C, rel=1e-9) == fit.C
    assert fit.t == pytest.approx(T, rel=1e-6, abs=1e-18)
