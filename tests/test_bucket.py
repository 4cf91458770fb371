"""Token buckets in ``tcpflow`` (``network.bucket``): the fit from PLogP's g(m), the platform
field, and what a bucket does to a prediction (docs/models.md, *Per message*)."""

from __future__ import annotations

import copy

import pytest

from commodel.errors import PlatformError
from commodel.fit.bucket import bucket
from commodel.platform import platform_from_dict
from commodel.prediction import predict
from commodel.schedules import collective

B_RATE = 1.25e7  # 100 Mbit/s
SIZES = [1, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072]


def shaped_g(burst: float, floor: float = 5e-6) -> list[float]:
    """PLogP's gap on a token-bucket port of ``burst`` bytes: a lone message passes its
    first ``burst`` bytes at once, the rest at the rate; ``floor`` the per-message cost."""
    return [max(floor, (m - burst) / B_RATE) for m in SIZES]


def test_the_bucket_is_what_a_lone_message_passes_at_once():
    # g(m) = (m - 2800) / b above the bucket: m - b g(m) = 2800 at 8 KiB .. 32 KiB (the
    # sizes where it is below m / 2); 4 KiB (1296 < 2048) is left out, as are 64 KiB and
    # up (Open MPI's rendezvous) and below 1 KiB.
    value, note = bucket({"sizes": SIZES, "g": shaped_g(2800)}, {"nic": B_RATE})
    assert value == 2800
    assert "8192 B 2800" in note and "4096 B" not in note and "65536 B" not in note
    # a binary tree's node link is its b(h = 1)
    tree = {"unidirectional": {"b": [B_RATE, 2 * B_RATE], "d": [0, 0]}}
    assert bucket({"sizes": SIZES, "g": shaped_g(2800)}, tree)[0] == 2800


def test_the_bucket_is_where_the_rising_sizes_meet_zero_whatever_their_slope():
    # a receiver that takes 1% longer a byte than the wire (or a b fitted 1% high) tilts
    # m - b g(m) from 2759 B at 4 KiB to 2472 B at 32 KiB; the line through the rising
    # sizes keeps B, where the median of m - b g(m) would follow which sizes were measured
    g = [max(5e-6, (m - 2800) * 1.01 / B_RATE) for m in SIZES]
    value, note = bucket({"sizes": SIZES, "g": g}, {"nic": B_RATE})
    assert value == 2800, note
    assert "b' = 1.238e+07" in note
    # one rising size: B = m - b g(m) there
    value, note = bucket({"sizes": [1024, 8192], "g": [5e-6, 5392 / B_RATE]}, {"nic": B_RATE})
    assert value == 2800, note


def test_sizes_the_non_decreasing_fit_pooled_are_left_out():
    # one slow size near the eager limit, pooled by the fit with the sizes after it into a
    # flat block of g (as a calibration on 2026-11-27 wrote 57-65 KiB): the block would
    # tilt the line (B = 5081 B with it); left out, B stays 2800
    sizes = [1024, 8192, 16384, 24576, 32768, 49152, 57344, 61440, 64512]
    g = [max(5e-6, (m - 2800) / B_RATE) for m in sizes]
    g[6:] = [g[-1] + 4e-4] * 3
    value, note = bucket({"sizes": sizes, "g": g}, {"nic": B_RATE})
    assert value == 2800, note
    assert "57344 B" not in note and "49152 B 2800" in note


def test_a_serializing_port_has_no_bucket():
    # every message pays its wire time and more: m - b g(m) < 0
    g = [m / B_RATE + 20e-6 for m in SIZES]
    value, note = bucket({"sizes": SIZES, "g": g}, {"nic": B_RATE})
    assert value is None and "serialize" in note


PLATFORM = {
    "commodel_platform": 1,
    "name": "t",
    "nodes": 8,
    "plogp": {
        "L": 20e-6,
        "sizes": SIZES,
        "o_s": [0.0] * len(SIZES),
        "o_r": [0.0] * len(SIZES),
        "g": shaped_g(2800),
    },
    "network": {"topology": "crossbar", "nodes": 8, "nic": B_RATE},
}


def predicted(name: str, m: int, bucket_bytes: int | None) -> float:
    doc = copy.deepcopy(PLATFORM)
    if bucket_bytes is not None:
        doc["network"]["bucket"] = bucket_bytes
    return predict(collective(name, 8, m), platform_from_dict(doc), "tcpflow").makespan_s


def test_a_chain_of_small_messages_pays_g_per_hop_with_the_bucket():
    # Pipeline bcast of 2 KiB on 8 ranks: 7 hops of one message from an idle port. With the
    # bucket each hop is PLogP's g(2 KiB) + L = 5 + 20 us; without, the wire time 2048 / b
    # = 163.84 us + L.
    with_bucket = predicted("bcast-pipeline", 2048, 2800)
    assert with_bucket == pytest.approx(7 * (5e-6 + 20e-6), rel=1e-6)
    assert predicted("bcast-pipeline", 2048, None) == pytest.approx(
        7 * (2048 / B_RATE + 20e-6), rel=1e-6
    )
    # a bucket of 0 is no bucket
    assert predicted("bcast-pipeline", 2048, 0) == predicted("bcast-pipeline", 2048, None)


def test_a_gather_into_one_port_still_pays_its_rate():
    # Seven 2 KiB messages into the root: its down link passes 2800 bytes at once, the other
    # 7 * 2048 - 2800 at its rate; the first, which fits, still costs its g(2 KiB) = 5 us.
    t = predicted("gather-basic-linear", 2048, 2800)
    assert t == pytest.approx((7 * 2048 - 2800) / B_RATE + 5e-6 + 20e-6, rel=1e-6)


@pytest.mark.parametrize(
    ("value", "words"),
    [(-1, ">= 0 bytes"), ("3k", "ambiguous"), ([3000], "a size in bytes"), (1.5, "whole")],
)
def test_a_bad_bucket_is_refused_naming_it(value, words):
    doc = copy.deepcopy(PLATFORM)
    doc["network"]["bucket"] = value
    with pytest.raises(PlatformError) as exc:
        platform_from_dict(doc)
    assert "network.bucket" in str(exc.value) and words in str(exc.value)
