"""``tcpflow``'s timeouts at ports between switches from Python: ``tcp.port_timeouts`` in
platform files, its prediction by hand, its fit through the model, and ``measure chain``
under mpirun (loopback; the emulated cluster's run is in the held-out study)."""

from __future__ import annotations

import copy

import pytest

from commodel import predict
from commodel.db import ResultsDB
from commodel.errors import PlatformError
from commodel.fit.chain import fit_rate, model_timeouts, per_round, port_timeouts_section
from commodel.platform import platform_from_dict
from commodel.schedules import collective, parse_goal
from mpirun import run

# Two racks of two nodes joined at the NIC rate (100 MB/s); g(1 MB) = 10 ms, L = 50 us.
PLATFORM = {
    "commodel_platform": 1,
    "name": "t",
    "nodes": 4,
    "plogp": {"L": 50e-6, "sizes": [1000000], "o_s": [1e-6], "o_r": [1e-6], "g": [0.01]},
    "network": {"topology": "racks", "racks": [2, 2], "nic": 1e8, "backbone": 1e8},
    "tcp": {"rto": 0.2, "efficiency": {"sizes": [1000000], "exchange": [1], "duplex": [1]}},
}

# 0 -> 2 and 1 -> 3: both cross rack 0's uplink and rack 1's downlink.
ACROSS = """num_ranks 4
rank 0 {
s: send 1000000b to 2 tag 0
}
rank 1 {
s: send 1000000b to 3 tag 1
}
rank 2 {
r: recv 1000000b from 0 tag 0
}
rank 3 {
r: recv 1000000b from 1 tag 1
}
"""


def with_ports(table):
    doc = copy.deepcopy(PLATFORM)
    doc["tcp"]["port_timeouts"] = table
    return doc


@pytest.mark.parametrize(
    "q, makespan_s, rtos",
    [
        # B/2 each: delivered by the fluid at 20 ms; both lose their tails: + T_RTO
        (1.0, 0.220 + 50e-6, 2),
        (0.0, 0.020 + 50e-6, 0),
    ],
)
def test_messages_sharing_a_port_between_switches_lose_their_tails_at_q(q, makespan_s, rtos):
    plat = platform_from_dict(with_ports({"sizes": [1000000], "rate": [q]}))
    pred = predict(parse_goal(ACROSS), plat, "tcpflow", noise=0)
    assert pred.makespan_s == pytest.approx(makespan_s, rel=1e-9)
    assert len(pred.rto_events) == rtos


def test_messages_below_m_or_in_one_switch_draw_nothing():
    below = platform_from_dict(with_ports({"sizes": [1000001], "rate": [1.0]}))
    assert predict(parse_goal(ACROSS), below, "tcpflow", noise=0).rto_events == []
    one = copy.deepcopy(PLATFORM)
    one["network"] = {"topology": "crossbar", "nodes": 4, "nic": 1e8}
    one["tcp"]["port_timeouts"] = {"sizes": [1], "rate": [1.0]}
    pred = predict(parse_goal(ACROSS), platform_from_dict(one), "tcpflow", noise=0)
    assert pred.rto_events == [] and pred.makespan_s == pytest.approx(0.010 + 50e-6)


@pytest.mark.parametrize(
    "table, field, words",
    [
        ({"sizes": [1, 2], "rate": [0.1]}, "tcp.port_timeouts.rate", "2"),
        ({"sizes": [2, 1], "rate": [0.1, 0.1]}, "tcp.port_timeouts.sizes[1]", "increase"),
        ({"sizes": [0], "rate": [0.1]}, "tcp.port_timeouts.sizes[0]", "from 1 byte"),
        ({"sizes": [1], "rate": [1.5]}, "tcp.port_timeouts.rate[0]", "[0, 1]"),
        ({"sizes": [1], "rate": ["x"]}, "tcp.port_timeouts.rate[0]", "'x'"),
        ({"sizes": [], "rate": []}, "tcp.port_timeouts.sizes", "at least 1 value"),
        ({"sizes": [1]}, "tcp.port_timeouts", "rate"),
    ],
)
def test_bad_port_timeouts_name_the_field(table, field, words):
    with pytest.raises(PlatformError) as exc:
        platform_from_dict(with_ports(table))
    assert field in str(exc.value) and words in str(exc.value)


def test_the_fit_finds_the_chance_that_predicts_the_measured_timeouts():
    # A pairwise exchange of 4 nodes at 64 KiB: without noise one run, whose count is a
    # step in q; the fitted q predicts at least tau, q less 2^-11 fewer.
    doc = copy.deepcopy(PLATFORM)
    sched = collective("alltoall-pairwise", 4, 65536)
    assert model_timeouts(doc, sched, None) == 0
    top = model_timeouts(doc, sched, {"sizes": [65536], "rate": [1.0]})
    assert top >= 1  # every message that shares a port loses its tail: the exchange has them
    q, base, got = fit_rate(doc, sched, 65536, 0.5)
    assert base == 0 and got >= 0.5 and 0 < q < 1
    below = model_timeouts(doc, sched, {"sizes": [65536], "rate": [q - 2**-11]})
    assert below < 0.5
    # more than every message can give: 1; nothing measured: 0
    assert fit_rate(doc, sched, 65536, top + 1)[0] == 1.0
    assert fit_rate(doc, sched, 65536, 0.0)[0] == 0.0
    table, note = port_timeouts_section(doc, 4, {65536: (0.5, 8)})
    assert table == {"sizes": [65536], "rate": [q]}
    assert "0.50 timeouts a round measured (8 rounds)" in note
    table, note = port_timeouts_section(doc, 4, {65536: (0.0, 8)})
    assert table is None and note.startswith("port_timeouts: none")


def test_rounds_without_a_timeout_count_are_an_error():
    rows = [{"quantity": "chain", "size_bytes": 1024, "extra": {"timeouts": None}}]
    with pytest.raises(Exception, match="no timeout count"):
        per_round(rows)
    rows = [
        {"quantity": "chain", "size_bytes": 1024, "extra": '{"timeouts": 1}'},
        {"quantity": "chain", "size_bytes": 1024, "extra": {"timeouts": 0}},
    ]
    assert per_round(rows) == {1024: (0.5, 2)}


def test_measure_chain_on_three_ranks(tmp_path):
    db = tmp_path / "c.duckdb"
    res = run(3, "measure", "chain", "--db", str(db), "--sizes", "1KiB,4KiB",
              "--min-reps", "2", "--reps", "3", "--budget", "0", "--quiet")  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert "1024 B: 0.00 timeouts a round (2 rounds)" in res.stdout
    with ResultsDB(str(db), read_only=True) as rdb:
        rows = [r for r in rdb.samples(1) if r["quantity"] == "chain"]
    # budget 0: min-reps rounds at each size, each timed and counted on every node
    assert sorted((r["size_bytes"], r["repetition"]) for r in rows) == [
        (1024, 0), (1024, 1), (4096, 0), (4096, 1),
    ]  # fmt: skip
    assert all(r["value_s"] > 0 and r["n_msgs"] == 6 for r in rows)


def test_measure_chain_refuses_reps_below_min_reps(tmp_path):
    res = run(3, "measure", "chain", "--db", str(tmp_path / "c.duckdb"), "--min-reps", "4",
              "--reps", "2")  # fmt: skip
    assert res.returncode == 2
    assert "--reps (2) must be at least --min-reps (4)" in res.stderr
