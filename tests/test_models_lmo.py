"""LMO closed forms (Lastovetsky and O'Flynn, sections 4.1-4.3 and 7)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from commodel.errors import CommodelError
from commodel.lmo import LMOModel, gather_split

# Four nodes: C_i (s), t_i (s/B), beta_ij (B/s).
C = [1e-4, 2e-4, 3e-4, 4e-4]
T = [1e-9, 2e-9, 3e-9, 4e-9]
B = 1e8
BETA = [
    [None if i == j else B * (1 + 0.5 * (i == 1 and j == 0)) for j in range(4)] for i in range(4)
]


def surface(ns: list[int], sizes: list[int], value: float) -> dict:
    """A B-spline surface through a constant grid, stored as commodel fit writes it."""
    from scipy.interpolate import RectBivariateSpline

    z = np.full((len(ns), len(sizes)), value)
    spl = RectBivariateSpline([float(n) for n in ns], [float(m) for m in sizes], z, kx=1, ky=1, s=0)
    tx, ty, c = spl.tck
    return {
        "kx": 1,
        "ky": 1,
        "n_knots": list(map(float, tx)),
        "M_knots": list(map(float, ty)),
        "coefficients": list(map(float, c)),
    }


M2O = {
    "n": [3, 4],
    "M1": [4000, 2000],
    "Mc": [None, 8000],
    "M2": 100000,
    "levels": [0.2, 0.6],
    "probability": [
        surface([3, 4], [1000, 50000], 0.3),
        surface([3, 4], [1000, 50000], 0.1),
    ],
    "kappa_1": 0.5,
    "kappa_2": 2.0,
}


@pytest.fixture
def model() -> LMOModel:
    return LMOModel(C, T, BETA, M2O)


def test_point_to_point(model: LMOModel) -> None:
    m = 1000
    assert model.point_to_point(1, 0, m) == pytest.approx(
        C[1] + T[1] * m + C[0] + T[0] * m + m / 1.5e8, rel=1e-12
    )
    assert model.point_to_point(2, 3, m) == pytest.approx(
        C[2] + T[2] * m + C[3] + T[3] * m + m / B, rel=1e-12
    )


def test_one_to_many_parallel_below_threshold_serial_above(model: LMOModel) -> None:
    m = 5000
    per = [C[d] + T[d] * m + m / B for d in (1, 2, 3)]
    base = C[0] + T[0] * 3 * m
    assert model.one_to_many(m, threshold=10000) == pytest.approx(base + max(per), rel=1e-12)
    assert model.one_to_many(m, threshold=1000) == pytest.approx(base + sum(per), rel=1e-12)
    assert model.one_to_many(m, 1000, dests=[2]) == pytest.approx(
        C[0] + T[0] * m + per[1], rel=1e-12
    )


def test_many_to_one_small_and_large(model: LMOModel) -> None:
    m = 1000
    inv_b0 = (1 / 1.5e8 + 1 / B + 1 / B) / 3
    small = C[0] + sum(C[1:]) + m * (T[0] + inv_b0 + 0.5 * sum(T[1:]))
    assert model.many_to_one_small(4, m) == pytest.approx(small, rel=1e-12)
    p = model.many_to_one(4, m)
    assert (p.region, p.escalations) == ("small", ())
    assert p.expected_s == pytest.approx(small, rel=1e-12)
    m = 200000
    large = C[0] + T[0] * m + m * inv_b0 + 2.0 * sum(C[s] + T[s] * m for s in (1, 2, 3))
    p = model.many_to_one(4, m)
    assert p.region == "large"
    assert p.linear_s == pytest.approx(large, rel=1e-12)


def test_medium_escalation_levels_and_thresholds(model: LMOModel) -> None:
    # n = 3: M1 = 4000, no Mc: f = (0.3, 0.1) from the surfaces.
    p = model.many_to_one(3, 5000)
    assert p.region == "medium"
    assert [e.time_s for e in p.escalations] == [0.2, 0.6]
    assert [e.probability for e in p.escalations] == pytest.approx([0.3, 0.1], abs=1e-12)
    lin = model.many_to_one_small(3, 5000)
    assert p.expected_s == pytest.approx(0.6 * lin + 0.3 * 0.2 + 0.1 * 0.6, rel=1e-12)
    # Below M1(3) = 4000 but above M1(4) = 2000.
    assert model.many_to_one(3, 3000).region == "small"
    assert model.many_to_one(4, 3000).region == "medium"
    # M1 between measured n is interpolated linearly: M1(3.5) = 3000.
    assert model.M1(3.5) == pytest.approx(3000)
    # From Mc(4) = 8000 escalation is certain: 0.75 and 0.25.
    p = model.many_to_one(4, 9000)
    assert [e.probability for e in p.escalations] == pytest.approx([0.75, 0.25], abs=1e-12)
    assert p.p_escalation == pytest.approx(1.0)
    # Sampling follows the probabilities.
    rng = random.Random(7)
    draws = [p3.sample(rng) for p3 in [model.many_to_one(3, 5000)] for _ in range(20000)]
    assert draws.count(0.2) / len(draws) == pytest.approx(0.3, abs=0.02)
    assert draws.count(0.6) / len(draws) == pytest.approx(0.1, abs=0.01)


def test_gather_split() -> None:
    # Smallest m with M/m <= M1 (and M/(m-1) > M1).
    assert gather_split(65536, 16384) == 4
    assert gather_split(65537, 16384) == 5
    assert gather_split(1000, 4000) == 1
    for size in range(1, 3000, 37):
        m = gather_split(size, 100)
        assert size / m <= 100 and (m == 1 or size / (m - 1) > 100)
    with pytest.raises(CommodelError, match="M1 must be > 0"):
        gather_split(10, 0)


def test_errors_name_the_missing_parameter() -> None:
    bare = LMOModel(C, T, BETA)
    assert bare.many_to_one_small is not None
    with pytest.raises(CommodelError, match="kappa_1"):
        bare.many_to_one_small(3, 100)
    with pytest.raises(CommodelError, match=r"beta\[0\]\[0\]"):
        bare.point_to_point(0, 0, 10)
    with pytest.raises(CommodelError, match="node 7"):
        bare.point_to_point(0, 7, 10)
    with pytest.raises(CommodelError, match="one entry per node"):
        LMOModel(C, T[:2], BETA)


def test_commodel_models_lists_the_engine_models() -> None:
    """``commodel.models`` is the function only; the LMO closed forms are ``commodel.lmo``."""
    import types

    import commodel.lmo

    names = [name for name, _ in commodel.models()]
    assert "plogp" in names and "plogpt" in names
    assert isinstance(commodel.models, types.FunctionType)
    assert commodel.lmo.LMOModel is LMOModel


def test_mc_is_not_held_beyond_the_counts_where_it_was_seen() -> None:
    """Certainty measured at n = 15 and 16 only says nothing of n = 8 (it was held constant
    below 15 before, so every 64 KiB many-to-one of 3..14 processes escalated for sure);
    between two counts that both have one, Mc is interpolated."""
    m2o = {"n": [8, 12, 15, 16], "M1": [16384] * 4, "Mc": [None, None, 65536, 65536]}
    model = LMOModel([0.0], [0.0], [[None]], m2o)
    assert [model.Mc(n) for n in (8, 10, 12, 14, 15, 16, 17)] == [
        None, None, None, None, 65536.0, 65536.0, None,
    ]  # fmt: skip
    model = LMOModel([0.0], [0.0], [[None]], {**m2o, "Mc": [8192, 16384, None, None]})
    assert [model.Mc(n) for n in (8, 10, 12, 13)] == [8192.0, 12288.0, 16384.0, None]
