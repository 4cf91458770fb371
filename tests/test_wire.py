"""``tcpflow``'s bytes on the wire: ``network.overhead`` h and ``network.ack`` a in platform
files, and what they do to a prediction (the engine's closed forms are in
crates/commodel-engine/tests/contention_tcpflow.rs)."""

from __future__ import annotations

import pytest

import commodel
from commodel.errors import PlatformError
from commodel.platform import platform_from_dict
from commodel.platform.engine_params import tcpflow_params

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
