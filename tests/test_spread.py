"""A prediction's spread (commodel.spread, predict --spread): K runs with per-message noise
of the platform's tcp.spread, the 10th and 90th percentiles of their makespans."""

from __future__ import annotations

import json
import math

import pytest
import yaml

from commodel import collective, predict
from commodel.errors import CommodelError
from commodel.platform import platform_from_dict
from commodel.spread import quantile, spread

# one crossbar of 1 MB/s links, PLogP with no per-message cost beyond the wire: a message of
# m bytes alone takes m us, plus L = 0
DOC = {
    "commodel_platform": 1,
    "name": "spread-test",
    "nodes": 4,
    "plogp": {"L": 0.0, "sizes": [0, 1_000_000], "o_s": [0, 0], "o_r": [0, 0], "g": [0, 1.0]},
    "network": {"topology": "crossbar", "nodes": 4, "nic": 1e6},
    "tcp": {"spread": 0.2},
}


def plat(sigma=0.2):
    doc = json.loads(json.dumps(DOC))
    if sigma is None:
        del doc["tcp"]
    else:
        doc["tcp"]["spread"] = sigma
    return platform_from_dict(doc)


def test_quantiles_are_linear_between_order_statistics():
    assert quantile([4.0, 1.0, 3.0, 2.0], 0.5) == 2.5
    assert quantile([1.0, 2.0, 3.0, 4.0, 5.0], 0.1) == pytest.approx(1.4)
    assert quantile([7.0], 0.9) == 7.0


def test_one_message_gets_the_lognormal_interval():
    """A single message of 1 MB: its time is 1 s times the factor, so the interval of many
    runs approaches exp(-sigma^2/2 -+ 1.2816 sigma)."""
    sched = collective("random-pairs", 2, 1_000_000, seed=1, degree=1)
    base = predict(sched, plat(), model="maxmin").makespan_s
    sp = spread(sched, plat(), "maxmin", samples=400)
    lo, hi = math.exp(-0.02 - 1.2816 * 0.2), math.exp(-0.02 + 1.2816 * 0.2)
    assert sp.low_s / base == pytest.approx(lo, rel=0.05)
    assert sp.high_s / base == pytest.approx(hi, rel=0.05)
    assert (sp.samples, sp.sigma) == (400, 0.2)
    # a seed gives the same runs: the interval repeats
    assert spread(sched, plat(), "maxmin", samples=20) == spread(sched, plat(), "maxmin", 20)


def test_no_spread_no_noise_and_bad_counts():
    sched = collective("alltoall-pairwise", 4, 65536)
    assert spread(sched, plat(None), "tcpflow") is None  # no tcp.spread
    assert spread(sched, plat(), "loggops") is None
    zero = spread(sched, plat(0.0), "tcpflow", samples=5)
    base = predict(sched, plat(0.0), model="tcpflow").makespan_s
    assert zero.low_s == zero.high_s == base
    with pytest.raises(CommodelError, match="at least 2 runs"):
        spread(sched, plat(), "tcpflow", samples=1)


def test_tcp_spread_is_validated():
    doc = json.loads(json.dumps(DOC))
    doc["tcp"]["spread"] = -0.1
    with pytest.raises(CommodelError, match=r"tcp\.spread.*\[0, 10\]"):
        platform_from_dict(doc)


def test_predict_prints_and_writes_the_interval(tmp_path, capsys):
    from commodel.cli.main import main

    p = tmp_path / "p.yaml"
    p.write_text(yaml.safe_dump(DOC))
    g = tmp_path / "a.goal"
    from commodel.schedules import write_goal

    write_goal(collective("alltoall-pairwise", 4, 65536), str(g))
    assert main(["predict", str(g), "--platform", str(p), "--model", "maxmin"]) == 0
    out = capsys.readouterr().out
    assert "interval" in out and "80%: 20 runs with per-message noise sigma 0.2" in out
    assert main(["predict", str(g), "-p", str(p), "--model", "maxmin", "--json",
                 "--no-messages", "--spread", "7"]) == 0  # fmt: skip
    data = json.loads(capsys.readouterr().out)
    iv = data["interval"]
    assert iv["samples"] == 7 and iv["quantiles"] == [0.1, 0.9]
    assert iv["low_s"] <= iv["high_s"]
    assert main(["predict", str(g), "-p", str(p), "--model", "maxmin", "--spread", "0"]) == 0
    assert "interval" not in capsys.readouterr().out
    assert main(["predict", str(g), "-p", str(p), "--model", "maxmin", "--spread", "1"]) == 2
    assert "at least 2 runs" in capsys.readouterr().err


def test_model_error_widens_the_interval_by_hand():
    """[1, 2] s from the noisy runs and sigma_m = 0.3: c = ln 2 / 2, sigma_f = ln 2 / 2z,
    the interval exp(c -+ z sqrt(sigma_f^2 + 0.09))."""
    from commodel.spread import Z90, widen

    z = 1.2815515655446004
    assert z == Z90
    s = math.sqrt((math.log(2) / (2 * z)) ** 2 + 0.3**2)
    lo, hi = widen(1.0, 2.0, 0.3)
    assert lo == pytest.approx(math.exp(math.log(2) / 2 - z * s), rel=1e-12)
    assert hi == pytest.approx(math.exp(math.log(2) / 2 + z * s), rel=1e-12)
    assert lo * hi == pytest.approx(2.0, rel=1e-12)  # the centre stays sqrt(lo hi)
    assert widen(1.0, 2.0, 0.0) == (1.0, 2.0)  # no model error: the noisy runs' interval
    # a point (no noise measured): exp(ln t -+ z sigma_m)
    assert widen(0.5, 0.5, 0.2) == pytest.approx(
        (0.5 * math.exp(-z * 0.2), 0.5 * math.exp(z * 0.2))
    )


def test_spread_takes_the_platforms_model_error():
    """tcpflow's interval is widened by tcp.model_error (its own error); maxmin's is not."""
    sched = collective("alltoall-pairwise", 4, 65536)
    doc = json.loads(json.dumps(DOC))
    doc["tcp"]["efficiency"] = {"sizes": [65536], "exchange": [0.8], "duplex": [0.9]}
    plain = platform_from_dict(doc)
    doc["tcp"]["model_error"] = 0.25
    with_error = spread(sched, platform_from_dict(doc), "tcpflow", samples=20)
    without = spread(sched, plain, "tcpflow", samples=20)
    assert with_error.model_error == 0.25 and without.model_error == 0.0
    from commodel.spread import widen

    assert (with_error.low_s, with_error.high_s) == widen(without.low_s, without.high_s, 0.25)
    other = spread(sched, platform_from_dict(doc), "maxmin", samples=20)
    assert other == spread(sched, plain, "maxmin", samples=20) and other.model_error == 0.0
    del doc["tcp"]["spread"]  # sigma_m alone: about the point prediction
    alone = spread(sched, platform_from_dict(doc), "tcpflow")
    t = predict(sched, plain, model="tcpflow", noise=0).makespan_s  # no sigma: no noise
    assert (alone.low_s, alone.high_s) == pytest.approx(widen(t, t, 0.25))
    assert alone.samples == 0 and alone.as_dict()["model_error"] == 0.25
    assert spread(sched, platform_from_dict(doc), "maxmin") is None  # no sigma for maxmin
    doc["tcp"]["model_error"] = -0.1
    with pytest.raises(CommodelError, match="tcp.model_error"):
        platform_from_dict(doc)


def test_tcpflow_predicts_the_run_of_median_makespan_among_its_noisy_runs():
    """Stragglers (docs/models.md): under tcpflow on a platform with tcp.spread the
    prediction is the run of median makespan among K runs with noise, seeds 1..K (the lower
    middle one for even K), whole: its ranks and messages are that run's."""
    sched = collective("alltoall-pairwise", 4, 65536)
    p = plat()
    free = predict(sched, p, model="tcpflow", noise=0)
    assert free.noise is None
    for k in (1, 5, 20):
        runs = sorted(
            (predict(sched, p, model="tcpflow", jitter={"sigma": 0.2, "seed": s}).makespan_ps, s)
            for s in range(1, k + 1)
        )
        ps, seed = runs[(k - 1) // 2]
        got = predict(sched, p, model="tcpflow", noise=k)
        assert got.makespan_ps == ps
        assert got.noise == {
            "runs": k,
            "sigma": 0.2,
            "seed": seed,
            "noise_free_makespan_s": free.makespan_s,
        }
        assert max(r.finish_ps for r in got.ranks) == got.makespan_ps
        assert max(m.end_s for m in got.messages) <= got.makespan_s
    # 20 runs by default; each of the 3 rounds waits for the slower of its flows, so the
    # median run ends after the run without noise
    default = predict(sched, p, model="tcpflow")
    assert default.noise["runs"] == 20 and default.makespan_s > free.makespan_s
    assert "noise" in default.to_dict() and "noise" not in free.to_dict()
    # the papers' models, and a platform without tcp.spread: the run without noise
    assert predict(sched, p, model="maxmin").noise is None
    assert predict(sched, plat(None), model="tcpflow").noise is None
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(CommodelError, match="noise"):
            predict(sched, p, model="tcpflow", noise=bad)


def test_the_interval_reuses_the_median_runs_makespans():
    """The median's K noisy runs are the interval's: spread takes their makespans from the
    prediction (seeds 1..K in order) and gives the interval it computes by running them;
    another K or σ runs its own."""
    sched = collective("alltoall-pairwise", 4, 65536)
    p = plat()
    pred = predict(sched, p, model="tcpflow")
    runs = [
        predict(sched, p, model="tcpflow", jitter={"sigma": 0.2, "seed": s}).makespan_s
        for s in range(1, 21)
    ]
    assert list(pred.noisy_makespans_s) == runs
    assert "noisy_makespans_s" not in pred.to_dict()
    assert spread(sched, p, "tcpflow", prediction=pred) == spread(sched, p, "tcpflow")
    # a prediction of other runs is not taken: 5 runs for an interval of 20, another σ
    five = predict(sched, p, model="tcpflow", noise=5)
    assert spread(sched, p, "tcpflow", prediction=five) == spread(sched, p, "tcpflow")
    assert spread(sched, p, "tcpflow", sigma=0.4, prediction=pred) == spread(
        sched, p, "tcpflow", sigma=0.4
    )


def test_a_large_schedule_gets_the_run_without_noise_unless_asked(monkeypatch):
    import commodel.prediction as prediction

    sched = collective("alltoall-pairwise", 4, 65536)  # 24 operations
    monkeypatch.setattr(prediction, "NOISE_MAX_OPS", sched.num_ops - 1)
    assert predict(sched, plat(), model="tcpflow").noise is None
    assert predict(sched, plat(), model="tcpflow", noise=3).noise["runs"] == 3
    monkeypatch.setattr(prediction, "NOISE_MAX_OPS", sched.num_ops)
    assert predict(sched, plat(), model="tcpflow").noise["runs"] == 20


def by_size_plat(spread_, sizes, sigma):
    doc = json.loads(json.dumps(DOC))
    doc["tcp"]["spread"] = spread_
    doc["tcp"]["spread_by_size"] = {"sizes": sizes, "sigma": sigma}
    return platform_from_dict(doc)


@pytest.mark.parametrize(
    "size, want",
    [
        (1_000_000, 0.4),  # at the table's last size and beyond: its value
        (1000, 0.1),  # below the table's first size: its value, above tcp.spread's 0.05
        (500_500, 0.25),  # linear between the sizes
    ],
)
def test_spread_by_size_gives_each_message_its_sigma(size, want):
    """tcp.spread_by_size: a message of m bytes gets sigma(m), at least tcp.spread: the
    interval of one message approaches exp(-sigma^2/2 -+ 1.2816 sigma) with that sigma."""
    p = by_size_plat(0.05, [1000, 1_000_000], [0.1, 0.4])
    sched = collective("random-pairs", 2, size, seed=1, degree=1)
    base = predict(sched, p, model="maxmin").makespan_s
    sp = spread(sched, p, "maxmin", samples=2000)
    lo = math.exp(-want * want / 2 - 1.2816 * want)
    hi = math.exp(-want * want / 2 + 1.2816 * want)
    assert sp.low_s / base == pytest.approx(lo, rel=0.05)
    assert sp.high_s / base == pytest.approx(hi, rel=0.05)


def test_spread_by_size_never_goes_below_tcp_spread():
    p = by_size_plat(0.3, [1000], [0.01])
    assert p.sections["tcp"].noise_by_size() == ([1000], [0.3])
    sched = collective("random-pairs", 2, 1_000_000, seed=1, degree=1)
    assert spread(sched, p, "maxmin", samples=50) == spread(sched, plat(0.3), "maxmin", 50)


@pytest.mark.parametrize(
    "table, match",
    [
        ({"sizes": [4096, 1024], "sigma": [0.1, 0.2]}, r"spread_by_size\.sizes\[1\].*increase"),
        ({"sizes": [4096], "sigma": [0.1, 0.2]}, r"spread_by_size\.sigma.*2 values"),
        ({"sizes": [4096], "sigma": [11]}, r"spread_by_size\.sigma\[0\].*\[0, 10\]"),
        ({"sizes": [4096]}, r"spread_by_size.*sigma"),
        ({"sizes": [-1], "sigma": [0.1]}, r"spread_by_size\.sizes\[0\]"),
    ],
)
def test_spread_by_size_is_validated(table, match):
    doc = json.loads(json.dumps(DOC))
    doc["tcp"]["spread_by_size"] = table
    with pytest.raises(CommodelError, match=match):
        platform_from_dict(doc)


def test_tcpflow_median_run_names_its_sigma_by_size():
    sched = collective("alltoall-pairwise", 4, 65536)
    p = by_size_plat(0.05, [4096, 262144], [0.1, 0.3])
    noise = predict(sched, p, model="tcpflow").noise
    assert noise["sigma"] == 0.05
    assert noise["sigma_by_size"] == {"sizes": [4096, 262144], "sigma": [0.1, 0.3]}
    assert "sigma_by_size" not in predict(sched, plat(0.05), model="tcpflow").noise
