"""PLogP fitting on synthetic samples with known parameters (no MPI)."""

from __future__ import annotations

import math

import pytest

from commodel.errors import CommodelError
from commodel.fit import plogp as F
from commodel.fit import yamlout
from commodel.measure import plogp as P

LAT, G0 = 20e-6, 3e-6


def o_s(m):
    return 2e-6 + 1e-9 * m


def o_r(m):
    return 3e-6 + 1.5e-9 * m


def g(m):
    return G0 + 4e-9 * m


def rtt(m):
    return 2 * LAT + g(m) + g(0)  # Kielmann: RTT(m) = L + g(m) + L + g(0)


def rtt_n(m, n):
    return 2 * LAT + n * g(m) + g(0)  # n messages in a row and one empty reply


SIZES = [0, 1, 2, 4, 1024, 65536]


def synthetic(method="fast", bidirectional=False, noise=()):
    samples = []

    def add(phase, pattern, q, m, value, n=1, rep=0):
        samples.append(
            {
                "phase": phase,
                "pattern": pattern,
                "quantity": q,
                "size_bytes": m,
                "n_msgs": n,
                "repetition": rep,
                "value_s": value,
            }
        )

    for n in (1, 10, 20, 40):
        for rep in range(3):
            add("g0", "uni", "rtt_n", 0, rtt_n(0, n), n, rep)
    for m in SIZES:
        for rep in range(5):
            bump = noise[rep] if rep < len(noise) else 0.0
            add("roundtrip", "uni", "rtt", m, rtt(m) + bump, rep=rep)
            add("roundtrip", "uni", "o_s", m, o_s(m) + bump, rep=rep)
            add("roundtrip", "uni", "o_r", m, o_r(m) + bump, rep=rep)
    if method == "saturation":
        for m in SIZES[1:]:
            for n in (1, 10, 20):
                add("gsat", "uni", "rtt_n", m, rtt_n(m, n) * 1.0, n)
    if bidirectional:
        for n in (1, 10):
            add("g0", "bi", "rtt_n", 0, rtt_n(0, n) * 2, n)  # both directions: twice the time
        for m in SIZES:
            add("roundtrip", "bi", "rtt", m, 2 * rtt(m))
    return samples


def test_fit_recovers_the_model_exactly():
    fit = F.fit_plogp(synthetic(), {"statistic": "median"})
    assert fit.sizes == SIZES
    g0 = rtt_n(0, 40) / 40  # RTT_n / n at the largest n
    assert fit.g0 == pytest.approx(g0, rel=1e-12)
    assert fit.L == pytest.approx((rtt(0) - 2 * g0) / 2, rel=1e-12)  # noqa: SIM300
    for i, m in enumerate(SIZES):
        assert fit.o_s[i] == pytest.approx(o_s(m), rel=1e-12)
        assert fit.o_r[i] == pytest.approx(o_r(m), rel=1e-12)
        assert fit.g[i] == pytest.approx(rtt(m) - rtt(0) + g0, rel=1e-9)


def test_saturation_and_bidirectional_tables():
    fit = F.fit_plogp(
        synthetic("saturation", True), {"method": "saturation", "bidirectional": True}
    )
    g0 = rtt_n(0, 40) / 40
    assert fit.g_saturation == pytest.approx([g0] + [rtt_n(m, 20) / 20 for m in SIZES[1:]])
    assert fit.g == fit.g_saturation
    # bidirectional: g_bi(0) = RTT_bi,n / n; g_bi(m) = RTT_bi(m) - RTT_bi(0) + g_bi(0)
    g0b = 2 * rtt_n(0, 10) / 10
    assert fit.g0_bidirectional == pytest.approx(g0b)
    assert fit.g_bidirectional == pytest.approx(
        [g0b] + [2 * rtt(m) - 2 * rtt(0) + g0b for m in SIZES[1:]], rel=1e-9
    )
    assert fit.L_bidirectional == pytest.approx((2 * rtt(0) - 2 * g0b) / 2)
    sec = F.plogp_section(fit)
    assert list(sec) == ["L", "sizes", "o_s", "o_r", "g", "bidirectional", "S"]
    assert sec["bidirectional"]["g"] == fit.g_bidirectional


def test_statistic_median_ignores_one_outlier_mean_does_not():
    samples = synthetic(noise=(0, 0, 0, 0, 1e-3))
    med = F.fit_plogp(samples, {"statistic": "median"})
    mean = F.fit_plogp(samples, {"statistic": "mean"})
    assert med.o_s[4] == pytest.approx(o_s(1024), rel=1e-12)
    assert mean.o_s[4] == pytest.approx(o_s(1024) + 2e-4, rel=1e-9)
    with pytest.raises(CommodelError, match="unknown statistic"):
        F.fit_plogp(samples, {"statistic": "mode"})


def test_table1_closed_forms():
    fit = F.fit_plogp(synthetic(), {})
    t1 = fit.table1()
    g0 = rtt_n(0, 40) / 40
    lat = (rtt(0) - 2 * g0) / 2
    g1 = rtt(1) - rtt(0) + g0
    assert t1["L"] == pytest.approx(lat + g1 - o_s(1) - o_r(1))
    assert t1["o"] == pytest.approx((o_s(1) + o_r(1)) / 2)
    assert t1["g"] == pytest.approx(g1)
    assert t1["G"] == pytest.approx((rtt(65536) - rtt(0) + g0) / 65536)
    assert t1["P"] == 2


def test_saturation_rule():
    # gap per message RTT_n/n: 10 -> 1.0, 20 -> 0.995 changed by 0.5% < 1%, and
    # RTT_1 < eps * RTT_n decides: 0.1 < 0.199 but not 0.3
    assert P.saturation_done(0.1, (10, 10.0), (20, 19.9), 0.01)
    assert not P.saturation_done(0.3, (10, 10.0), (20, 19.9), 0.01)
    assert P.saturation_done(0.1, (1000, 1000.0), (2000, 1999.0), 0.01)
    assert not P.saturation_done(0.1, (1000, 1000.0), (2000, 1900.0), 0.01)  # 5% change
    assert not P.saturation_done(0.1, None, (2000, 1999.0), 0.01)
    assert F.saturation_gap(rtt_n(0, 40), 40) == rtt_n(0, 40) / 40


def test_extrapolation_and_agreement():
    assert P.extrapolate(1, 1.0, 2, 2.0, 4) == 4.0
    # |4.05 - 4| = 0.05 > 0.01 * 4.05, but <= 0.0125 * 4.05
    assert P.agrees(1, 1.0, 0, 2, 2.0, 0, 4, 4.05, 0, 0.01) is False
    assert P.agrees(1, 1.0, 0, 2, 2.0, 0, 4, 4.05, 0, 0.0125)
    # within two standard errors of the difference counts as agreement
    se = 0.02 / 2 / math.sqrt(1 + 3**2 + 2**2)  # r = 2: noise = se*sqrt(1+9+4)
    assert P.agrees(1, 1.0, se, 2, 2.0, se, 4, 4.019, se, 0.001)
    assert P.halving_limit(1024, 0.01) == 32.0
    assert P.halving_limit(1 << 20, 0.01) == pytest.approx(10485.76)


def test_incomplete_campaign_is_a_clear_error():
    samples = [s for s in synthetic() if s["phase"] != "g0"]
    with pytest.raises(CommodelError, match="saturation measurement incomplete"):
        F.fit_plogp(samples, {})
    with pytest.raises(CommodelError, match="no samples"):
        F.fit_plogp([], {})


def test_yaml_writer_is_deterministic_and_loadable(tmp_path):
    from commodel.platform import load_platform

    fit = F.fit_plogp(synthetic(bidirectional=True), {"bidirectional": True})
    doc = {"commodel_platform": 1, "name": "synthetic", "nodes": 2, "plogp": F.plogp_section(fit)}
    text = yamlout.dump(doc, {"plogp": "a comment"})
    assert text == yamlout.dump(doc, {"plogp": "a comment"})
    assert "# a comment\nplogp:\n  L: " in text
    path = tmp_path / "p.yaml"
    path.write_text(text)
    plat = load_platform(str(path))
    assert plat.plogp.L == pytest.approx(fit.L, rel=1e-6)  # noqa: SIM300
    assert plat.plogp.sizes == tuple(SIZES)
    assert plat.plogp.g == pytest.approx(fit.g, rel=1e-6)
    assert plat.plogp.bidirectional.g == pytest.approx(fit.g_bidirectional, rel=1e-6)
    assert yamlout.scalar(1e-5) == "1.0e-05" and yamlout.scalar(0.1234567891) == "0.123457"
    with pytest.raises(ValueError, match="non-finite"):
        yamlout.scalar(float("nan"))


def test_negative_L_is_written_as_zero_and_listed():
    samples = synthetic()
    for s in samples:  # saturation 10x slower: g(0) > RTT(0)/2, so L < 0
        if s["phase"] == "g0":
            s["value_s"] *= 10
    fit = F.fit_plogp(samples, {})
    assert fit.L < 0
    sec = F.plogp_section(fit)
    assert sec["L"] == 0.0
    assert F.adjusted_values(fit)[0] == f"L = {fit.L:.6g} s -> 0"
    assert F.adjusted_values(F.fit_plogp(synthetic(), {})) == []


def test_monotone_fit_hand_computed():
    # already non-decreasing: unchanged
    assert F.monotone_fit([1.0, 2.0, 2.0, 5.0], [1, 1, 1, 1]) == [1.0, 2.0, 2.0, 5.0]
    # one violation pools the pair into its weighted mean: (4*3 + 2*1)/3 = 3.5 ... with
    # weights 1 and 3: (4*1 + 3*3)/4 = 3.25
    assert F.monotone_fit([1.0, 4.0, 3.0, 6.0], [1, 1, 3, 1]) == [1.0, 3.25, 3.25, 6.0]
    # a pooled block that then violates the one before pools again: 5, (2+2)/2=2 -> (5+2+2)/3=3
    assert F.monotone_fit([5.0, 2.0, 2.0, 7.0], [1, 1, 1, 1]) == [3.0, 3.0, 3.0, 7.0]
    # negative values: pooled, then bounded by 0 (the constrained least-squares solution)
    assert F.monotone_fit([-3.0, -1.0, 2.0], [1, 1, 1]) == [0.0, 0.0, 2.0]
    assert F.monotone_fit([1.0, -3.0, 4.0], [1, 1, 1]) == [0.0, 0.0, 4.0]  # mean -1 -> 0
    assert F.monotone_fit([], []) == []


def test_noisy_g_is_fitted_not_clamped():
    """A round trip that came out short at m = 2 and 4 (noise): g(2), g(4) fall below g(1)
    and below 0; the written table is the weighted isotonic fit, listed in the comment."""
    samples = synthetic()
    short = rtt(0) - 2 * g(0) - 1e-6  # RTT(m) - RTT(0) + g(0) = -g(0) - 1e-6 < 0
    for s in samples:
        if s["phase"] == "roundtrip" and s["quantity"] == "rtt" and s["size_bytes"] in (2, 4):
            s["value_s"] = short
    fit = F.fit_plogp(samples, {})
    g_raw = fit.g
    assert g_raw[2] < 0 and g_raw[3] < 0
    sec = F.plogp_section(fit)
    written = sec["g"]
    assert written == sorted(written) and min(written) >= 0
    # sizes 0, 1, 2, 4 pool into one block (equal weights: 5 repetitions each): their mean
    pooled = max(0.0, sum(g_raw[:4]) / 4)
    assert written[:4] == pytest.approx([pooled] * 4, rel=1e-12)
    assert written[4:] == pytest.approx(g_raw[4:], rel=1e-12)  # untouched above
    notes = F.adjusted_values(fit)
    assert [n.split(" = ")[0] for n in notes] == ["g(0)", "g(1)", "g(2)", "g(4)"]


def test_falling_overheads_are_fitted_too():
    """o_r measured lower at 1 KiB than at 4 B (unexpected vs expected messages, noise):
    written non-decreasing, so the platform loader has no falling table to warn about."""
    samples = synthetic()
    for s in samples:
        if s["quantity"] == "o_r" and s["size_bytes"] == 1024:
            s["value_s"] = o_r(0) / 2
    fit = F.fit_plogp(samples, {})
    sec = F.plogp_section(fit)
    assert sec["o_r"] == sorted(sec["o_r"])
    # 0, 1, 2, 4 B and 1 KiB pool into their mean; 64 KiB stays as measured
    pooled = sum(fit.o_r[:5]) / 5
    assert sec["o_r"][:5] == pytest.approx([pooled] * 5, rel=1e-12)
    assert sec["o_r"][5] == pytest.approx(o_r(65536), rel=1e-12)
    assert sec["o_s"] == pytest.approx(fit.o_s, rel=1e-12)  # already non-decreasing
    assert any(n.startswith("o_r(1024) = ") for n in F.adjusted_values(fit))


def test_split_modes_unimodal_stays_whole():
    from commodel.stats import split_modes

    values = [0.060 * (1 + 0.01 * ((7 * i) % 10 - 5)) for i in range(10)]  # +-5%
    normal, escalated = split_modes(values)
    assert escalated == [] and sorted(values) == normal


def test_split_modes_finds_a_70_30_split():
    from commodel.stats import split_modes

    low = [0.060, 0.061, 0.0595, 0.0605, 0.0602, 0.0598, 0.0601]
    high = [0.120, 0.121, 0.1195]
    normal, escalated = split_modes(low[:4] + high[:1] + low[4:] + high[1:])
    assert normal == sorted(low) and escalated == sorted(high)
    assert len(escalated) / (len(normal) + len(escalated)) == pytest.approx(0.3)
    # 80% escalated: the 2 fastest are still the normal mode
    normal, escalated = split_modes([0.06, 0.0601] + [0.12 + 1e-4 * i for i in range(8)])
    assert normal == [0.06, 0.0601] and len(escalated) == 8
    # one slow sample is an outlier, not a mode (at least 2 samples in each group)
    assert split_modes(low + [0.5])[1] == []


def test_split_modes_does_not_split_a_heavy_tail():
    from commodel.stats import split_modes

    # quantiles of a Pareto (alpha = 2) and of a log-normal (sigma = 0.5): one mode each,
    # their largest gaps (1.0 and 0.5 at the top) stay below 4 times the spread below them
    pareto = [(1 - (i + 0.5) / 30) ** -0.5 for i in range(30)]
    assert split_modes(pareto)[1] == []
    from statistics import NormalDist

    lognormal = [math.exp(0.5 * NormalDist().inv_cdf((i + 0.5) / 30)) for i in range(30)]
    assert split_modes(lognormal)[1] == []


def test_bimodal_roundtrips_split_into_table_and_escalation(tmp_path):
    """Bidirectional round trips at 1 MiB alternating 0.06 / 0.12 s (3 of 10 slow): the table
    holds the normal mode, the escalation its g(m) level and frequency 0.3."""
    from commodel.platform import load_platform

    samples = synthetic()
    m_big = 1 << 20
    for rep in range(10):
        slow = rep in (2, 5, 8)
        t = (0.12 if slow else 0.06) * (1 + 0.001 * rep)
        for q, v in (("rtt", t), ("o_s", o_s(m_big)), ("o_r", o_r(m_big))):
            samples.append({"phase": "roundtrip", "pattern": "uni", "quantity": q,
                            "size_bytes": m_big, "n_msgs": 1, "repetition": rep,
                            "value_s": v})  # fmt: skip
    for n in (1, 10):
        samples.append({"phase": "g0", "pattern": "bi", "quantity": "rtt_n", "size_bytes": 0,
                        "n_msgs": n, "repetition": 0, "value_s": rtt_n(0, n)})  # fmt: skip
    for m in SIZES + [m_big]:
        for rep in range(10):
            t = rtt(m) if m != m_big else (0.12 if rep in (1, 4, 7) else 0.06) * (1 + 0.001 * rep)
            samples.append({"phase": "roundtrip", "pattern": "bi", "quantity": "rtt",
                            "size_bytes": m, "n_msgs": 1, "repetition": rep,
                            "value_s": t})  # fmt: skip
    fit = F.fit_plogp(samples, {"statistic": "median", "bidirectional": True})
    rtt0 = rtt(0)
    g0 = rtt_n(0, 40) / 40
    normal = sorted(0.06 * (1 + 0.001 * r) for r in range(10) if r not in (2, 5, 8))
    slow = sorted(0.12 * (1 + 0.001 * r) for r in (2, 5, 8))
    assert fit.g[-1] == pytest.approx(normal[3] - rtt0 + g0, rel=1e-12)
    (level, freq) = fit.escalation[m_big]
    assert level == pytest.approx(slow[1] - rtt0 + g0, rel=1e-12)
    assert freq == pytest.approx(0.3)
    assert set(fit.escalation) == {m_big}  # the unimodal sizes have none
    g0b = rtt_n(0, 10) / 10
    assert fit.escalation_bidirectional[m_big][1] == pytest.approx(0.3)
    assert fit.escalation_bidirectional[m_big][0] == pytest.approx(
        0.12 * 1.004 - rtt(0) + g0b, rel=1e-12
    )
    sec = F.plogp_section(fit)
    assert sec["escalation"]["sizes"] == [m_big]
    assert sec["escalation"]["frequency"] == [pytest.approx(0.3)]
    assert sec["bidirectional"]["escalation"]["sizes"] == [m_big]
    doc = {"commodel_platform": 1, "name": "t", "nodes": 2, "plogp": sec}
    path = tmp_path / "p.yaml"
    path.write_text(yamlout.dump(doc))
    plat = load_platform(str(path))
    assert plat.plogp.escalation.sizes == (m_big,)
    assert plat.plogp.escalation.frequency == (pytest.approx(0.3),)
    assert plat.plogp.bidirectional.escalation.level[0] == pytest.approx(
        fit.escalation_bidirectional[m_big][0], rel=1e-5
    )


@pytest.mark.parametrize(
    ("escalation", "field", "problem"),
    [
        ({"sizes": [3], "level": [0.1], "frequency": [0.5]}, "plogp.escalation.sizes[0]",
         "3 is not one of plogp.sizes"),
        ({"sizes": [1024], "level": [0.1], "frequency": [0]}, "plogp.escalation.frequency[0]",
         "(0, 1]"),
        ({"sizes": [1024], "level": [0.1, 0.2], "frequency": [0.5]}, "plogp.escalation.level",
         "has 2 values"),
        ({"sizes": [1024], "level": [-1], "frequency": [0.5]}, "plogp.escalation.level[0]",
         ">= 0"),
        ({"sizes": [1024], "level": [0.1]}, "plogp.escalation.frequency", "missing"),
    ],
)  # fmt: skip
def test_bad_escalation_names_the_field(escalation, field, problem, cli, tmp_path):
    import yaml

    plogp = {"L": 1e-5, "sizes": [0, 1024], "o_s": [1e-6, 2e-6], "o_r": [1e-6, 2e-6],
             "g": [1e-6, 2e-5], "S": None, "escalation": escalation}  # fmt: skip
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({"commodel_platform": 1, "name": "b", "nodes": 2,
                                    "plogp": plogp}))  # fmt: skip
    from conftest import EXAMPLES

    res = cli("predict", EXAMPLES / "schedules" / "plogpt-example.goal", "--platform", path,
              "--model", "plogp")  # fmt: skip
    assert res.code == 2, res.err
    assert f"bad.yaml: {field}" in res.err and problem in res.err, res.err


def test_the_rendezvous_threshold_is_open_mpis_tcp_eager_limit():
    from commodel.fit.plogp import rendezvous_threshold

    assert rendezvous_threshold("Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4") == 65535
    assert rendezvous_threshold("MPICH Version: 4.0.2") is None


@pytest.mark.parametrize("quantity", ["rtt", "o_s", "o_r"])
def test_a_size_without_its_samples_is_a_clear_error(quantity):
    """A campaign marked complete that lacks one size's rtt, o_s or o_r samples (it ended in
    a KeyError)."""
    samples = [s for s in synthetic() if not (s["quantity"] == quantity and s["size_bytes"] == 4)]
    with pytest.raises(CommodelError) as info:
        F.fit_plogp(samples, {})
    assert (
        str(info.value) == f"the plogp campaign has no {quantity} samples at 4 B; measure it again"
    )
