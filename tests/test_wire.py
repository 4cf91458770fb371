"""``tcpflow``'s bytes on the wire: ``network.overhead`` h and ``network.ack`` a in platform
files, their fit from ``measure efficiency``'s streams, and what they do to a prediction."""

from __future__ import annotations

import pytest

import commodel
from commodel.errors import PlatformError
from commodel.fit.wire import wire
from commodel.platform import platform_from_dict
from commodel.platform.engine_params import tcpflow_params

B = 1e7  # B/s, the nodes' links


def stream_rows(pattern: str, m: int, k: int, w: float, flows: list[tuple[int, int]]):
    """Three repetitions of a stream round whose flows take 1 ms + k w / B (w bytes a
    message), the first two 0.1 ms apart around it."""
    t = 1e-3 + k * w / B
    return [
        {"phase": "stream", "quantity": "flow", "pattern": pattern, "size_bytes": m,
         "repetition": r, "src": s, "dst": d, "value_s": t + dt, "extra": {"flow": i, "count": k}}
        for r, dt in enumerate((-1e-4, 1e-4, 0.0))
        for i, (s, d) in enumerate(flows)
    ]  # fmt: skip


def streams(ow: dict[int, float], ring: dict[int, float]) -> list[dict]:
    rows = []
    for m, w in ow.items():
        for k in (8, 32):
            rows += stream_rows("oneway", m, k, w, [(0, 1), (2, 3)])
    for m, w in ring.items():
        for k in (8, 32):
            rows += stream_rows("duplex", m, k, w, [(0, 1), (1, 2), (2, 3), (3, 0)])
    return rows


NETWORK = {"topology": "crossbar", "nodes": 4, "nic": B, "bucket": 3000}


def test_fit_takes_the_bytes_a_message_adds_one_way_and_in_the_ring():
    # per message one way 612 B at 512 B and 1124 B at 1 KiB (h = 100); in the ring 732
    # and 1244 (a = 120). At 4 KiB the one-way stream runs faster than m / b (per-message
    # CPU would set its pace): left out, and with it its ring's 9999.
    rows = streams({512: 612, 1024: 1124, 4096: 1000}, {512: 732, 1024: 1244, 4096: 9999})
    h, a, note = wire(rows, NETWORK)
    assert (h, a) == (100, 120)
    assert "512 B: one way 61.2 us (h 100 B), ring 73.2 us (a 120 B)" in note
    assert "4096 B: 100.0 us a message one way, below m / b (left out)" in note
    # medians over the sizes: h of 60 and 100 at two sizes and 140 at a third -> 100
    rows = streams({512: 572, 1024: 1124, 2048: 2188}, {})
    assert wire(rows, NETWORK)[:2] == (100, None)
    # none below 0: a ring faster than one way is noise
    assert wire(streams({1024: 1124}, {1024: 1100}), NETWORK)[:2] == (100, 0)
    # no stream rounds, or only one message count: nothing
    assert wire([], NETWORK)[:2] == (None, None)
    one_count = [r for r in streams({1024: 1124}, {}) if r["extra"]["count"] == 8]
    assert wire(one_count, NETWORK)[:2] == (None, None)


PLATFORM = {
    "commodel_platform": 1,
    "name": "t",
    "nodes": 8,
    "plogp": {"L": 50e-6, "sizes": [2048, 65536], "o_s": [1e-6, 1e-6], "o_r": [1e-6, 1e-6],
              "g": [1e-12, 655.36e-6]},
    "network": {"topology": "crossbar", "nodes": 8, "nic": 1e8, "bucket": 3000},
}  # fmt: skip


def platform(**network) -> dict:
    doc = {k: (dict(v) if isinstance(v, dict) else v) for k, v in PLATFORM.items()}
    doc["network"].update(network)
    return doc


def test_overhead_and_ack_reach_the_model(tmp_path):
    # The engine's closed forms (crates/commodel-engine/tests/contention_tcpflow.rs) from a
    # platform file: seven 2 KiB messages into rank 0 end at (7 (2048 + h) - 3000) / NIC + L.
    goal = tmp_path / "seven.goal"
    lines = ["num_ranks 8", "rank 0 {"]
    lines += [f"r{s}: recv 2048b from {s} tag 0" for s in range(1, 8)] + ["}"]
    for s in range(1, 8):
        lines += [f"rank {s} {{", "s: send 2048b to 0 tag 0", "}"]
    goal.write_text("\n".join(lines) + "\n")
    plain = commodel.predict(str(goal), platform_from_dict(platform()), "tcpflow")
    assert plain.makespan_s == pytest.approx(113.36e-6 + 50e-6, abs=1e-11)
    with_h = commodel.predict(str(goal), platform_from_dict(platform(overhead=100)), "tcpflow")
    assert with_h.makespan_s == pytest.approx(120.36e-6 + 50e-6, abs=1e-11)
    params = tcpflow_params(platform_from_dict(platform(overhead=100, ack=120)))
    assert (params["overhead"], params["ack"]) == (100, 120)
    assert "overhead" not in tcpflow_params(platform_from_dict(platform()))


@pytest.mark.parametrize("field", ["overhead", "ack"])
@pytest.mark.parametrize("value, words", [(-1, ">= 0 bytes"), ("lots", "size in bytes")])
def test_bad_overhead_or_ack_names_the_field(field, value, words):
    with pytest.raises(PlatformError) as exc:
        platform_from_dict(platform(**{field: value}))
    assert f"network.{field}" in str(exc.value) and words in str(exc.value)
