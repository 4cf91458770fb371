"""``predict --samples``: the stochastic incast rule fed by the many_to_one statistics."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

from commodel.errors import CommodelError
from commodel.lmo.incast import incast_table, predict_samples
from commodel.platform import platform_from_dict
from conftest import needs_engine


def surface(value: float) -> dict:
    from scipy.interpolate import RectBivariateSpline

    ns, sizes = [3.0, 8.0], [1000.0, 100000.0]
    spl = RectBivariateSpline(ns, sizes, np.full((2, 2), value), kx=1, ky=1, s=0)
    tx, ty, c = spl.tck
    return {
        "kx": 1,
        "ky": 1,
        "n_knots": list(map(float, tx)),
        "M_knots": list(map(float, ty)),
        "coefficients": list(map(float, c)),
    }


PLATFORM: dict[str, Any] = {
    "commodel_platform": 1,
    "name": "incast",
    "nodes": 8,
    "plogp": {"L": 1e-5, "sizes": [0], "o_s": [0.0], "o_r": [0.0], "g": [1e-4], "S": None},
    "many_to_one": {
        "n": [3, 8],
        "M1": [4000, 4000],
        "Mc": [None, None],
        "M2": 50000,
        "levels": [0.2],
        "probability": [surface(0.5)],
    },
}


def gather(ranks: int, size: int):
    from commodel.schedules import collective

    return collective("gather-basic-linear", ranks, size)


@needs_engine
def test_table_covers_medium_sizes_only() -> None:
    platform = platform_from_dict(copy.deepcopy(PLATFORM), "i.yaml")
    table = incast_table(platform, gather(4, 8000))
    assert table["levels"] == [200_000_000_000]
    assert [row[:2] for row in table["table"]] == [[3, 8000], [4, 8000]]
    assert table["table"][0][2] == pytest.approx([0.5])
    assert incast_table(platform, gather(4, 1000))["table"] == []  # below M1
    assert incast_table(platform, gather(4, 60000))["table"] == []  # from M2 on


@needs_engine
def test_samples_escalate_with_the_probability(cli) -> None:
    platform = platform_from_dict(copy.deepcopy(PLATFORM), "i.yaml")
    result = predict_samples(gather(4, 8000), platform, "plogp", samples=200, seed=3)
    assert 70 <= result.escalated_runs <= 130
    base = min(result.makespans_s)
    assert base < 0.01
    assert all(t == base or t >= 0.2 for t in result.makespans_s)
    assert result.p95_s >= 0.2 and result.median_s in (base, max(result.makespans_s))
    again = predict_samples(gather(4, 8000), platform, "plogp", samples=200, seed=3)
    assert again.makespans_s == result.makespans_s, "seeded: repeatable"
    text = result.report()
    assert "p95" in text and "makespan histogram:" in text


@needs_engine
def test_samples_need_the_many_to_one_section(cli, tmp_path) -> None:
    data = copy.deepcopy(PLATFORM)
    del data["many_to_one"]
    platform = platform_from_dict(data, "i.yaml")
    with pytest.raises(CommodelError, match="many_to_one"):
        predict_samples(gather(4, 8000), platform, "plogp", samples=2)
    goal = tmp_path / "g.goal"
    goal.write_text(gather(4, 8000).to_goal())
    result = cli(
        "predict", goal, "--platform", "loggopsim-default", "--model", "plogp", "--samples", "3"
    )
    assert result.code == 2 and "many_to_one" in result.err


@needs_engine
def test_the_measured_escalations_stand_for_tcpflow_fan_in() -> None:
    # A gather's 3 senders into rank 0 are fan-in for tcpflow (e_f = 0.2 doubles and more
    # their time); with the incast rule the measured escalations stand for those losses,
    # so the samples are those of the platform without the fan-in table.
    doc = copy.deepcopy(PLATFORM)
    doc["network"] = {"topology": "crossbar", "nodes": 8, "nic": 1e8}
    doc["tcp"] = {"efficiency": {"sizes": [8000], "exchange": [1.0], "duplex": [1.0]}}
    plain = platform_from_dict(copy.deepcopy(doc), "i.yaml")
    doc["tcp"]["efficiency"]["fanin"] = {"peers": 3, "sizes": [8000], "e": [0.2]}
    fan = platform_from_dict(doc, "i.yaml")
    from commodel.prediction import predict

    assert (
        predict(gather(4, 8000), fan, "tcpflow").makespan_s
        > predict(gather(4, 8000), plain, "tcpflow").makespan_s * 1.5
    )
    a = predict_samples(gather(4, 8000), fan, "tcpflow", samples=20, seed=1)
    b = predict_samples(gather(4, 8000), plain, "tcpflow", samples=20, seed=1)
    assert a.makespans_s == b.makespans_s
