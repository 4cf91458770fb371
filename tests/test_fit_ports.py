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
    got = probes(n, racks)
    a2a = got.pop("alltoall")
    assert got == expect
    # every node to every other once, in the order a linear alltoall posts them
    assert sorted(a2a) == [(i, j) for i in range(n) for j in range(n) if i != j]
    assert a2a[:n] == [(i, (i - 1) % n) for i in range(n)]


def _samples(outcomes: dict[int, bool], flows: list) -> list[dict]:
    """Three rounds of the host probe per size, each with 2 timeouts where it timed out."""
    return _probe_rounds("host", flows, {m: [2 if out else 0] * 3 for m, out in outcomes.items()})


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


def _probe_rounds(pattern: str, flows: list, hits: dict[int, list[int]]) -> list[dict]:
    """Rounds of one probe: per size, the timeouts each round's hosts counted."""
    return [
        {
            "quantity": "burst",
            "pattern": pattern,
            "size_bytes": m,
            "extra": {"flows": json.dumps(flows), "timeouts": t},
        }
        for m, counts in hits.items()
        for t in counts
    ]


def test_timeouts_of_fan_in_start_where_every_larger_size_timed_out():
    got = probes(6, None)
    sizes = [4096 << k for k in range(7)]
    # host: 16 KiB counted one timeout in three rounds (under half a round's), 64 KiB three
    # and on from there: M = 64 KiB; the all-to-all bursts only at 256 KiB (128 KiB: one)
    host = dict(
        zip(sizes, [[0, 0, 0], [0, 0, 0], [1, 0, 0], [0, 0, 0], [0, 2, 1], [3, 1, 2], [1, 1, 5]])
    )
    a2a = dict(
        zip(sizes, [[0, 0, 0], [0, 0, 0], [0, 0, 0], [1, 1, 0], [4, 0, 3], [0, 0, 1], [9, 2, 4]])
    )
    samples = _probe_rounds("host", got["host"], host) + _probe_rounds(
        "alltoall", got["alltoall"], a2a
    )
    found, note = ports.timeouts_section(samples)
    # the host rule (any sender) covers the all-to-all bursts from 64 KiB: one rule
    assert found == [{"senders": 5, "size": 65536}], note
    assert "host (5 senders into a node)" in note and "alltoall (5 senders into a node)" in note
    # the all-to-all bursts time out from 16 KiB on: a rule of its own, for senders that
    # each send to 5 nodes
    a2a[131072] = [1, 1, 1]
    a2a[16384] = [0, 1, 2]
    found, note = ports.timeouts_section(
        _probe_rounds("host", got["host"], host) + _probe_rounds("alltoall", got["alltoall"], a2a)
    )
    assert found == [
        {"senders": 5, "size": 65536},
        {"senders": 5, "size": 16384, "fanout": 5},
    ], note
    assert "5 senders each sending to 5 into one node time out from 16384 B on" in note
    # no probe's largest size timed out: no rule
    host[262144] = [0, 0, 1]
    found, note = ports.timeouts_section(_probe_rounds("host", got["host"], host))
    assert found is None and note.startswith("timeouts: none"), note


def test_a_size_times_out_at_half_a_timeout_a_round_as_a_validated_schedule_does():
    # three rounds: 2 timeouts in all time out (one round may count both: a burst that
    # lost two tails), 1 does not; the same measure as validate's max(1, reps / 2)
    got = probes(4, None)
    for counts, out in (
        ([0, 2, 0], True),
        ([0, 1, 1], True),
        ([3, 0, 0], True),
        ([1, 0, 0], False),
    ):
        rounds = _probe_rounds("host", got["host"], {65536: [0, 0, 0], 131072: counts})
        assert ports.timed_out(rounds)["host"][131072][0] is out, counts
    # two rounds: one timeout is half a timeout a round
    rounds = _probe_rounds("host", got["host"], {131072: [0, 1]})
    assert ports.timed_out(rounds)["host"][131072][0] is True


def test_the_fitted_timeouts_drive_tcpflow():
    # the rule as fitted predicts a timeout of the probe it came from, at M and not below
    from commodel.platform import platform_from_dict
    from commodel.prediction import predict

    doc = _doc(fifo_limit=None)
    doc["tcp"]["timeouts"] = [
        {"senders": 7, "size": 65536},
        {"senders": 7, "fanout": 7, "size": 8192},
    ]
    host, a2a = probes(8, None)["host"], probes(8, None)["alltoall"]
    plat = platform_from_dict(doc)
    for flows, m, expect in (
        (host, 32768, 0), (host, 65536, 1), (host, 262144, 1),  # the host rule
        (a2a, 4096, 0), (a2a, 8192, 8), (a2a, 65536, 8),  # the all-to-all rule: every node
    ):  # fmt: skip
        pred = predict(round_schedule(flows, m, 8), plat, "tcpflow", noise=0)
        assert len(pred.rto_events) == expect, (m, pred.rto_events)
