"""``tcp.model_error`` from a ``check`` campaign (commodel.fit.check): 1.4826 times the
median of |ln(measured / predicted)| over the collectives the part ran, predicted with
tcpflow."""

from __future__ import annotations

import math

import pytest

from commodel import collective, predict
from commodel.errors import CommodelError
from commodel.fit import check as F
from commodel.measure.check import CHECKS, validate_options
from commodel.platform import platform_from_dict

N = 5  # not a power of two
DOC = {
    "commodel_platform": 1,
    "name": "check-test",
    "nodes": N,
    "plogp": {"L": 20e-6, "sizes": [0, 1_000_000], "o_s": [0, 0], "o_r": [0, 0], "g": [5e-6, 0.1]},
    "network": {"topology": "crossbar", "nodes": N, "nic": 12.5e6},
    "tcp": {"spread": 0.1, "efficiency": {"sizes": [65536], "exchange": [0.8], "duplex": [0.9]}},
}
FACTORS = (1.25, 0.8, 1.1, 1.0)  # measured / predicted of each check schedule


def rows(factors=FACTORS, ranks=N):
    plat = platform_from_dict(DOC)
    out = []
    for (name, size), f in zip(CHECKS, factors):
        t = predict(collective(name, ranks, size), plat, "tcpflow").makespan_s
        for rep, noise in enumerate((0.9, 1.0, 1.3)):  # the median is the middle one
            out.append({"phase": "check", "quantity": "makespan", "pattern": name,
                        "size_bytes": size, "n_ranks": ranks, "repetition": rep,
                        "value_s": f * t * noise})  # fmt: skip
    return out


def test_model_error_is_the_scaled_median_of_the_absolute_log_ratios():
    sigma, note = F.error_section(DOC, rows())
    # |ln f| sorted: 0, ln 1.1, ln 1.25 (= |ln 0.8|) twice: the median is the middle pair's mean
    want = 1.4826 * (math.log(1.1) + math.log(1.25)) / 2
    assert sigma == pytest.approx(want, rel=1e-9)
    assert note.startswith("model_error 0.236: 1.4826 x the median")
    assert "alltoall-pairwise 8192 B" in note and "(+25%)" in note and "(-20%)" in note
    assert F.error_section(DOC, rows((1.0,) * 4))[0] == pytest.approx(0.0, abs=1e-12)
    assert F.model_error([math.log(2)]) == pytest.approx(1.4826 * math.log(2))


def test_one_outlying_check_does_not_decide_the_model_error():
    """Three checks within 5-10% and one at 3x (the allreduce ring on 12 busy hosts): the
    root mean square would be 0.55; the median keeps the three's scale."""
    ratios = [math.log(f) for f in (3.0, 1.05, 0.95, 1.1)]
    assert math.sqrt(sum(r * r for r in ratios) / 4) == pytest.approx(0.5525, abs=1e-4)
    assert F.model_error(ratios) == pytest.approx(
        1.4826 * (abs(math.log(0.95)) + math.log(1.1)) / 2, rel=1e-12
    )
    assert F.model_error(ratios) < 0.11


def test_the_check_runs_on_the_platforms_nodes():
    with pytest.raises(CommodelError, match="ran on 4 ranks, the platform has 5 nodes"):
        F.error_section(DOC, rows(ranks=4))
    with pytest.raises(CommodelError, match="no check schedule"):
        F.model_error([])


def test_check_options():
    assert validate_options({})["budget"] == 3.0
    with pytest.raises(CommodelError, match="--max-reps"):
        validate_options({"min_reps": 4, "max_reps": 3})
    with pytest.raises(CommodelError, match="--timeout"):
        validate_options({"timeout": 0})
