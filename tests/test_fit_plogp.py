"""PLogP fitting on synthetic samples with known parameters (no MPI)."""

from __future__ import annotations

import math

import pytest

from commodel.errors import CommodelError
from commodel.fit import plogp as F
from commodel.fit import yamlout

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
    assert F.saturation_done(0.1, (10, 10.0), (20, 19.9), 0.01)
    assert not F.saturation_done(0.3, (10, 10.0), (20, 19.9), 0.01)
    assert F.saturation_done(0.1, (1000, 1000.0), (2000, 1999.0), 0.01)
    assert not F.saturation_done(0.1, (1000, 1000.0), (2000, 1900.0), 0.01)  # 5% change
    assert not F.saturation_done(0.1, None, (2000, 1999.0), 0.01)
    assert F.saturation_gap(rtt_n(0, 40), 40) == rtt_n(0, 40) / 40


def test_extrapolation_and_agreement():
    assert F.extrapolate(1, 1.0, 2, 2.0, 4) == 4.0
    # |4.05 - 4| = 0.05 > 0.01 * 4.05, but <= 0.0125 * 4.05
    assert F.agrees(1, 1.0, 0, 2, 2.0, 0, 4, 4.05, 0, 0.01) is False
    assert F.agrees(1, 1.0, 0, 2, 2.0, 0, 4, 4.05, 0, 0.0125)
    # within two standard errors of the difference counts as agreement
    se = 0.02 / 2 / math.sqrt(1 + 3**2 + 2**2)  # r = 2: noise = se*sqrt(1+9+4)
    assert F.agrees(1, 1.0, se, 2, 2.0, se, 4, 4.019, se, 0.001)
    assert F.halving_limit(1024, 0.01) == 32.0
    assert F.halving_limit(1 << 20, 0.01) == pytest.approx(10485.76)


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
