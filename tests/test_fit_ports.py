"""fit.ports: the switch ports' buffers, fitted through tcpflow's tail-drop rule.

The "measurements" here are what tcpflow itself predicts of the probes at a known buffer
(the round of ``measure ports``' host probe on 8 nodes, m doubling from 4 KiB): the fit
must give that buffer back, to the resolution of its grid. The probe on the emulated
cluster's ports is in tests/test_calibrate_cluster.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from commodel.fit import ports
from commodel.fit.efficiency import round_schedule
from commodel.measure.ports import probes

ROOT = Path(__file__).resolve().parent.parent
STEP = (ports.HIGH / ports.LOW) ** (1 / (ports.STEPS - 1))  # the grid's ratio, 1.17


def _doc(fifo_limit: int | None = 262144) -> dict:
    doc = yaml.safe_load((ROOT / "examples/platforms/two-rack-8-calibrated.yaml").read_text())
    doc["network"] = {"topology": "crossbar", "nodes": 8, "nic": 11927100.0}
    if fifo_limit is not None:
        doc["tcp"]["fifo_limit"] = fifo_limit
    return doc


def _measured(doc: dict, buffer: int) -> dict[int, tuple[bool, list]]:
    flows = probes(8, None)["host"]
    return {
        m: (ports.predicts_timeout(doc, [buffer], round_schedule(flows, m, 8)), flows)
        for m in (4096 << k for k in range(7))
    }


def test_a_buffer_between_the_sizes_is_found_within_a_grid_step():
    doc = _doc()
    sizes = _measured(doc, 65536)
    outcomes = [out for out, _ in sizes.values()]
    assert any(outcomes) and not all(outcomes)  # the probe tells buffers apart here
    value, _, note = ports.fit_height(doc, 8, sizes, [])
    assert 65536 / STEP <= value <= 65536 * STEP, note
    assert "7/7 sizes as measured" in note
    # the value fitted predicts what was "measured"
    flows = probes(8, None)["host"]
    for m, (out, _) in sizes.items():
        assert ports.predicts_timeout(doc, [value], round_schedule(flows, m, 8)) == out


def test_no_timeout_gives_a_lower_bound_and_every_timeout_an_upper_one():
    doc = _doc()
    value, _, note = ports.fit_height(doc, 8, _measured(doc, 1 << 20), [])
    assert "at least" in note and value <= 1 << 20
    value, _, note = ports.fit_height(doc, 8, _measured(doc, 8192), [])
    assert "at most" in note and value >= 8192 / STEP  # the port holds at most that


def test_nothing_is_fitted_where_the_rule_cannot_tell_buffers_apart():
    # without fifo_limit no message is injected open-loop: tcpflow predicts no timeout at
    # any buffer, so the probes say nothing of it
    doc = _doc(fifo_limit=None)
    value, _, note = ports.fit_height(doc, 8, _measured(doc, 65536), [])
    assert value is None and "the same of every probe" in note


@pytest.mark.parametrize(
    "n,racks,expect",
    [
        (5, None, {"host": [(1, 0), (2, 0), (3, 0), (4, 0)]}),
        (5, [[0, 1, 2], [3, 4]], {"host": [(1, 0), (2, 0), (3, 0), (4, 0)],
                                  "uplink": [(3, 0), (4, 1)]}),
        (4, [[0, 1], [2, 3]], {"host": [(1, 0), (2, 0), (3, 0)], "uplink": [(0, 2), (1, 3)]}),
    ],
)  # fmt: skip
def test_probes_cross_the_port_toward_a_node_and_a_racks_uplink(n, racks, expect):
    assert probes(n, racks) == expect


def _samples(outcomes: dict[int, bool], flows: list) -> list[dict]:
    return [
        {
            "quantity": "burst",
            "pattern": "host",
            "size_bytes": m,
            "extra": {"flows": json.dumps(flows), "timeouts": 2 if out else 0},
        }
        for m, out in outcomes.items()
        for _ in range(3)
    ]


def test_a_port_that_never_timed_out_gets_no_buffer_written():
    # the harshest incast measured lost no tail: the least buffer that agrees would predict
    # tail drops in milder patterns, so nothing is written (dev study, seed 1)
    doc = _doc()
    flows = probes(8, None)["host"]
    sizes = {4096 << k: False for k in range(7)}
    values, note = ports.buffer_section(doc, _samples(sizes, flows))
    assert values is None and "holds at least" in note
    # where the probes bound it from both sides, the buffer is written
    measured = {m: out for m, (out, _) in _measured(doc, 65536).items()}
    values, note = ports.buffer_section(doc, _samples(measured, flows))
    assert values is not None and 65536 / STEP <= values[0] <= 65536 * STEP, note
