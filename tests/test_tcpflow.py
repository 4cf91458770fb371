"""The ``tcpflow`` model from Python: ``tcp.efficiency`` in platform files, the default
model of a calibrated platform, the efficiency fit, and ``measure efficiency`` under mpirun."""

from __future__ import annotations

import pytest

import commodel
from commodel.db import ResultsDB
from commodel.errors import PlatformError
from commodel.fit.efficiency import (
    efficiency_and_fifo_limit,
    efficiency_section,
    fifo_limit,
    flows_by_round,
    model_oneway,
    rebase_efficiency,
    round_schedule,
)
from commodel.measure import efficiency as E
from commodel.platform import default_model, load_platform, platform_from_dict
from mpirun import commodel as commodel_cmd
from mpirun import needs_mpi, run

# Two racks of two nodes, 100 MB/s NICs; g(1 MB) = 10 ms, L = 50 us.
PLATFORM = {
    "commodel_platform": 1,
    "name": "t",
    "nodes": 4,
    "plogp": {
        "L": 50e-6,
        "sizes": [1000000],
        "o_s": [1e-6],
        "o_r": [1e-6],
        "g": [0.01],
    },
    "network": {
        "topology": "racks",
        "racks": [2, 2],
        "nic": 1e8,
        "backbone": 4e8,
    },
    "tcp": {
        "efficiency": {"sizes": [1000000], "exchange": [0.5], "duplex": [0.8]},
    },
}

EXCHANGE = """num_ranks 2
rank 0 {
s: send 1000000b to 1 tag 0
r: recv 1000000b from 1 tag 1
}
rank 1 {
s: send 1000000b to 0 tag 1
r: recv 1000000b from 0 tag 0
}
"""


def with_efficiency(eff):
    doc = {k: (dict(v) if isinstance(v, dict) else v) for k, v in PLATFORM.items()}
    doc["tcp"] = {"efficiency": eff}
    return doc


def test_an_exchange_runs_at_e_x(tmp_path):
    goal = tmp_path / "x.goal"
    goal.write_text(EXCHANGE)
    platform = platform_from_dict(PLATFORM)
    # 10 ms / 0.5 + L (docs/models.md); plogp gives 10 ms + L
    assert commodel.predict(str(goal), platform, "tcpflow").makespan_s == pytest.approx(0.02005)
    assert commodel.predict(str(goal), platform, "plogp").makespan_s == pytest.approx(0.01005)


def test_a_calibrated_platform_predicts_with_tcpflow_by_default(tmp_path, cli):
    goal = tmp_path / "x.goal"
    goal.write_text(EXCHANGE)
    assert default_model(platform_from_dict(PLATFORM)) == "tcpflow"
    assert commodel.predict(str(goal), platform_from_dict(PLATFORM)).model == "tcpflow"
    plain = {k: v for k, v in PLATFORM.items() if k != "tcp"}
    assert "loggops" not in plain
    # without efficiencies or a loggops section: the first model it can drive (tcpflow
    # with e = 1, max-min with PLogP costs: 10 ms + L for each direction of the exchange)
    assert default_model(platform_from_dict(plain)) == "tcpflow"
    assert commodel.predict(str(goal), platform_from_dict(plain)).makespan_s == pytest.approx(
        0.01005
    )
    only_plogp = {k: v for k, v in plain.items() if k != "network"}
    assert default_model(platform_from_dict(only_plogp)) == "plogp"
    assert default_model(load_platform("nomura2007")) == "loggops"
    path = tmp_path / "p.yaml"
    import yaml

    path.write_text(yaml.safe_dump(PLATFORM))
    res = cli("predict", str(goal), "--platform", str(path))
    assert res.code == 0, res.err
    assert "tcpflow" in res.out and "20.050 ms" in res.out


@pytest.mark.parametrize(
    "eff, field, words",
    [
        ({"sizes": [1], "exchange": [0], "duplex": [1]}, "tcp.efficiency.exchange[0]", "(0, 1]"),
        ({"sizes": [1], "exchange": [1], "duplex": [1.5]}, "tcp.efficiency.duplex[0]", "1.5"),
        ({"sizes": [1, 2], "exchange": [1], "duplex": [1, 1]}, "tcp.efficiency.exchange", "2"),
        ({"sizes": [2, 1], "exchange": [1, 1], "duplex": [1, 1]}, "tcp.efficiency.sizes", ""),
        ({"sizes": [1], "exchange": [1]}, "tcp.efficiency", "duplex"),
        ({"sizes": [1], "exchange": ["x"], "duplex": [1]}, "tcp.efficiency.exchange[0]", "'x'"),
    ],
)
def test_bad_efficiency_names_the_field(eff, field, words):
    with pytest.raises(PlatformError) as exc:
        platform_from_dict(with_efficiency(eff))
    assert field in str(exc.value) and words in str(exc.value)


def star(root_op: str, nbytes: int) -> str:
    """GOAL of rank 0 sending to (``send``) or receiving from (``recv``) ranks 1, 2, 3, in
    that order, ``nbytes`` each."""
    other = {"send": "recv", "recv": "send"}[root_op]
    way = {"send": "to", "recv": "from"}
    lines = ["num_ranks 4", "rank 0 {"]
    lines += [f"o{r}: {root_op} {nbytes}b {way[root_op]} {r} tag 0" for r in (1, 2, 3)]
    lines.append("}")
    for r in (1, 2, 3):
        lines += [f"rank {r} {{", f"o0: {other} {nbytes}b {way[other]} 0 tag 0", "}"]
    return "\n".join(lines) + "\n"


FANOUT = star("send", 1000000)


@pytest.mark.parametrize(
    "limit, ends_ms",
    # up to the limit: one after the other at the NIC rate, g = 10 ms each, + L (rank 3 in the
    # other rack: its route is faster than the NIC); above it or no limit: shared, 30 ms
    [(1000000, [10.05, 20.05, 30.05]), (999999, [30.05] * 3), (None, [30.05] * 3)],
)
def test_small_messages_leave_a_nic_in_posting_order(tmp_path, limit, ends_ms):
    goal = tmp_path / "f.goal"
    goal.write_text(FANOUT)
    doc = {k: (dict(v) if isinstance(v, dict) else v) for k, v in PLATFORM.items()}
    doc["tcp"] = {"efficiency": PLATFORM["tcp"]["efficiency"]}
    if limit is not None:
        doc["tcp"]["fifo_limit"] = limit
    pred = commodel.predict(str(goal), platform_from_dict(doc), "tcpflow")
    ends = sorted(m.end_s for m in pred.messages)
    assert ends == pytest.approx([t * 1e-3 for t in ends_ms])


@pytest.mark.parametrize("value, words", [(-1, ">= 0 bytes"), ("lots", "size in bytes")])
def test_bad_fifo_limit_names_the_field(value, words):
    doc = {k: (dict(v) if isinstance(v, dict) else v) for k, v in PLATFORM.items()}
    doc["tcp"] = {"fifo_limit": value}
    with pytest.raises(PlatformError) as exc:
        platform_from_dict(doc)
    assert "tcp.fifo_limit" in str(exc.value) and words in str(exc.value)


def flow_rows(pattern, size, reps):
    """Synthetic samples: per repetition a dict (src, dst) -> seconds."""
    return [
        {"phase": "efficiency", "quantity": "flow", "pattern": pattern, "size_bytes": size,
         "repetition": r, "src": s, "dst": d, "value_s": t}
        for r, flows in enumerate(reps)
        for (s, d), t in flows.items()
    ]  # fmt: skip


def test_fit_takes_the_expected_pair_and_ring_flow_times():
    # one-way flows: mean 10 ms, the later of a repetition's two 11 ms. Exchanges: pairs
    # (0, 1), (2, 3); the later flow of each pair: 10, 20 (rep 0), 20, 10 (rep 1): mean
    # 15 ms, e_x = 11 / 15 (later against later). Ring flows: mean 12.5 ms, e_d = 10 /
    # 12.5 = 0.8. At 64 KiB (one flow a repetition) the exchange is faster than one way:
    # written as 1, and with no ring e_d = e_x.
    ow = {(0, 1): 0.009, (2, 3): 0.011}
    rows = (
        flow_rows("oneway", 4096, [ow, ow])
        + flow_rows(
            "exchange",
            4096,
            [
                {(0, 1): 0.010, (1, 0): 0.009, (2, 3): 0.010, (3, 2): 0.020},
                {(0, 1): 0.020, (1, 0): 0.010, (2, 3): 0.010, (3, 2): 0.010},
            ],
        )
        + flow_rows("duplex", 4096, [{(0, 1): 0.010, (1, 2): 0.015, (2, 0): 0.0125}])
        + flow_rows("oneway", 65536, [{(0, 1): 0.1}])
        + flow_rows("exchange", 65536, [{(0, 1): 0.09, (1, 0): 0.08}])
    )
    section, note = efficiency_section(rows)
    assert section["sizes"] == [4096, 65536]
    assert section["exchange"] == [round(11 / 15, 4), 1.0]
    assert section["duplex"] == [0.8, 1.0]
    assert "written as 1: exchange(65536 B) = 1.111" in note
    assert (
        "one-way flow 10.000 ms (two 11.000 ms), exchanging pair 15.000 ms (round 20.000 ms)"
        in note
    )


def test_the_ring_rounds_give_the_spread_of_a_message_by_its_size():
    """sigma(m): the root mean square of log(flow / its repetition's geometric mean) over
    the ring's flows of size m. At 4 KiB two repetitions of three flows, their logs 0, a, 2a
    about a (a = ln 2) and 0, 0, 0: sqrt(2 a^2 / 6); at 64 KiB none (one way only)."""
    import math

    ow = {(0, 1): 0.009, (2, 3): 0.011}
    ex = {(0, 1): 0.010, (1, 0): 0.010}
    rows = (
        flow_rows("oneway", 4096, [ow])
        + flow_rows("exchange", 4096, [ex])
        + flow_rows(
            "duplex",
            4096,
            [
                {(0, 1): 0.010, (1, 2): 0.020, (2, 0): 0.040},
                {(0, 1): 0.01, (1, 2): 0.01, (2, 0): 0.01},
            ],
        )
        + flow_rows("oneway", 65536, [ow])
        + flow_rows("exchange", 65536, [ex])
    )
    tcp, note = efficiency_and_fifo_limit(rows)
    a = math.log(2)
    assert tcp["spread_by_size"] == {"sizes": [4096], "sigma": [round(math.sqrt(2 * a * a / 6), 4)]}
    assert "spread_by_size, sigma of a ring flow's time about its round's: 4096 B 0.400" in note
    no_ring = [r for r in rows if r["pattern"] != "duplex"]
    assert "spread_by_size" not in efficiency_and_fifo_limit(no_ring)[0]


def test_efficiency_is_rebased_on_the_models_own_one_way_time():
    # A token-bucket-like PLogP: g(4 KiB) = 10 us, far below the wire time 4096 B / 100 MB/s
    # = 40.96 us, so a lone flow is charged m / b: T_m = 40.96 + L (50) = 90.96 us. The
    # rounds ran faster than that one way (T_ow 30 us, the later of two 40 us); both ways
    # the pairs' later flows took 20 us more than the later of two one-way flows: e_x =
    # T_m / (T_m + 20 us), not T_ow2 / T = 0.667; the ring 15 us more than a one-way flow:
    # e_d = T_m / (T_m + 15).
    m = 4096
    doc = {
        **PLATFORM,
        "plogp": {"L": 50e-6, "sizes": [1, m], "o_s": [0, 0], "o_r": [0, 0], "g": [1e-8, 1e-5]},
    }  # fmt: skip
    rows = (
        flow_rows("oneway", m, [{(0, 1): 20e-6, (2, 3): 40e-6}])
        + flow_rows("exchange", m, [{(0, 1): 60e-6, (1, 0): 50e-6, (2, 3): 55e-6, (3, 2): 60e-6}])
        + flow_rows("duplex", m, [{(0, 1): 45e-6, (1, 2): 45e-6, (2, 3): 45e-6, (3, 0): 45e-6}])
    )  # fmt: skip
    section, _ = efficiency_section(rows)
    assert section["exchange"] == [round(40 / 60, 4)] and section["duplex"] == [round(30 / 45, 4)]
    base = model_oneway(doc, rows)
    t_m = m / 1e8 + 50e-6
    assert base == {m: pytest.approx(t_m, rel=1e-9)}
    rebased, note = rebase_efficiency({**section, "fanin": "kept"}, rows, base)
    assert rebased["exchange"] == [round(t_m / (t_m + 20e-6), 4)]
    assert rebased["duplex"] == [round(t_m / (t_m + 15e-6), 4)]
    assert rebased["fanin"] == "kept" and section["exchange"] == [0.6667]  # not in place
    assert "4096 B 0.091 ms, exchange 0.667 -> 0.820, duplex 0.667 -> 0.858" in note
    # the model's exchange with the rebased e_x takes about the measured excess (20 us)
    # more than its one-way time (the excess is charged to the flow's time on the wire,
    # not to L)
    doc["tcp"] = {"efficiency": {"sizes": [m], "exchange": rebased["exchange"], "duplex": [1.0]}}
    ex = commodel.predict(
        round_schedule([(0, 1), (1, 0)], m, 4), platform_from_dict(doc), "tcpflow"
    )
    wire = m / 1e8
    assert ex.makespan_s == pytest.approx(t_m + 20e-6 * wire / t_m, rel=1e-3)


def test_fit_without_rounds_is_an_error():
    with pytest.raises(commodel.errors.CommodelError, match="no one-way and exchange rounds"):
        efficiency_section(flow_rows("oneway", 4096, [{(0, 1): 0.01}]))


def test_fifo_limit_is_the_largest_size_served_in_order():
    # 3 peers: in order when first / last <= (1/3 + 1) / 2 = 0.667. 1 KiB: 1, 2, 3 ms
    # (0.33, in order); 2 KiB: 4, 6, 6.1 ms (0.656, in order); 4 KiB: 7, 8, 9 ms (0.78,
    # shared); 8 KiB in order again: the limit; 16 KiB shared.
    def fan(m, t1, t2, t3):
        return flow_rows("fanout", m, [{(0, 1): t1, (0, 2): t2, (0, 4): t3}])

    rows = fan(1024, 1, 2, 3) + fan(2048, 4, 6, 6.1) + fan(4096, 7, 8, 9) + fan(8192, 1, 2, 3)
    rows += fan(16384, 9, 9, 9)
    limit, note = fifo_limit(flows_by_round(rows))
    assert limit == 8192
    assert note == (
        "fanout, first / last peer's time: 1024 B 0.33, 2048 B 0.66, 4096 B 0.78 shared, "
        "8192 B 0.33, 16384 B 1.00 shared"
    )
    assert fifo_limit(flows_by_round(fan(1024, 3, 3, 3)))[0] is None  # never in order
    assert fifo_limit(flows_by_round(flow_rows("oneway", 1024, [{(0, 1): 1}]))) == (None, "")


def test_rounds_and_node_ranks():
    assert E.node_ranks(["a", "a", "b", "b", "c"]) == [0, 2, 4]
    assert E.node_ranks(["h"] * 3) == [0, 1, 2]
    assert E.flows("oneway", [0, 2, 4, 6]) == [(0, 2), (4, 6)]
    assert E.flows("exchange", [0, 2, 4]) == [(0, 2), (2, 0)]
    assert E.flows("duplex", [0, 2, 4]) == [(0, 2), (2, 4), (4, 0)]
    assert E.flows("duplex", [0, 1]) == []
    assert E.flows("fanout", [0, 2, 4, 6, 8]) == [(0, 2), (0, 4), (0, 6)]
    assert E.flows("fanout", [0, 2, 4]) == [(0, 2), (0, 4)]
    assert E.flows("fanout", [0, 2]) == []
    assert E.validate_options({"sizes": [4096, 65536]})["fanout_sizes"] == [
        1024 * 2**i for i in range(7)
    ]
    assert E.validate_options({"sizes": [1 << 20]})["fanout_sizes"][-1] == 256 * 1024
    with pytest.raises(commodel.errors.CommodelError, match="increasing"):
        E.validate_options({"sizes": [4096, 1024]})


@pytest.mark.mpi
@needs_mpi
def test_measure_efficiency_on_three_ranks(tmp_path):
    db = tmp_path / "e.duckdb"
    res = run(3, "measure", "efficiency", "--db", str(db), "--sizes", "1KiB,64KiB",
              "--alltoall-sizes", "16KiB", "--min-reps", "3", "--max-reps", "3",
              "--quiet")  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert "e_x (exchange)" in res.stdout
    with ResultsDB(str(db), read_only=True) as rdb:
        rows = rdb.samples(1)
    reps: dict[tuple, set] = {}
    # the rounds; besides them one machine row a rank and an untimed warm-up
    assert {(r["phase"], r["pattern"]) for r in rows if r["phase"] != "efficiency"} == {
        ("warmup", "warmup")
    }
    assert sum(1 for r in rows if r["phase"] == "warmup") == 6  # every node pair, both ways
    for r in (r for r in rows if r["phase"] == "efficiency" and r["quantity"] == "flow"):
        reps.setdefault((r["pattern"], r["size_bytes"]), set()).add(r["repetition"])
    # --min-reps 3 --max-reps 3: every round and size timed exactly 3 times
    assert reps and all(len(v) == 3 for v in reps.values()), reps
    # the all-to-all round at 16 KiB only: 3 nodes, 6 flows per repetition
    assert {k for k in reps if k[0] == "alltoall"} == {("alltoall", 16384)}
    assert sum(1 for r in rows if r["pattern"] == "alltoall") == 3 * 6
    assert "all-to-all rounds of 3 nodes" in res.stdout
    out = tmp_path / "fitted.yaml"
    fit = commodel_cmd("fit", "--db", str(db), "-o", str(out))
    assert fit.returncode == 0, fit.stderr
    eff = load_platform(str(out)).tcp.efficiency
    assert eff.sizes == (1024, 65536)
    assert all(0 < e <= 1 for e in eff.exchange + eff.duplex)
    # the fan-out rounds ran at 1 KiB .. 64 KiB, 2 peers; the fit names each size
    assert "fifo_limit" in out.read_text() and "fanout, first / last peer's time: 1024 B" in (
        out.read_text()
    )
    # no plogp or network section to fit fan-in through: said, and no table
    assert eff.fanin is None
    assert "fanin not fitted: it is fitted through tcpflow, which needs the plogp, network" in (
        out.read_text()
    )


def test_measure_efficiency_refuses_fewer_than_two_repetitions(tmp_path):
    res = commodel_cmd("measure", "efficiency", "--db", str(tmp_path / "e.duckdb"),
                       "--min-reps", "1")  # fmt: skip
    assert res.returncode == 2
    assert "--min-reps must be >= 2, got 1" in res.stderr
    assert "Traceback" not in res.stderr


INCAST = star("recv", 10000)


def tail_drop_platform(rule: str, buffer: list[int]) -> dict:
    """PLATFORM with 10 kB messages taking g = 100 us, L = 50 us, T_RTO 200 ms, ``buffer``
    per height and ``rule`` as tcp.rto_rule."""
    doc = {k: (dict(v) if isinstance(v, dict) else v) for k, v in PLATFORM.items()}
    doc["plogp"] = {"L": 50e-6, "sizes": [10000], "o_s": [1e-6], "o_r": [1e-6], "g": [100e-6]}
    doc["network"]["buffer"] = buffer
    doc["tcp"] = {"rto": 0.2, "fifo_limit": 65536, "rto_rule": rule}
    return doc


@pytest.mark.parametrize(
    "rule, buffer, rtos, makespan_s",
    [
        # three 10 kB messages into rank 0's port (100 us each on the wire at 100 MB/s): it
        # gets 3 x 100 MB/s and drains 100 MB/s, 20 kB queued by 100 us, when all three end;
        # 16 kB of frames: full, every tail lost, each 200 ms (the tcp section's rto) late
        # after its fluid finish (300 us: the three share the port) + L
        ("buffer", [16384, 1 << 20], 3, 0.3e-3 + 0.2 + 50e-6),
        ("buffer", [32768, 1 << 20], 0, 0.3e-3 + 50e-6),  # 32 KiB holds the 20 kB
        ("plogpt", [16384, 1 << 20], 0, 0.3e-3 + 50e-6),  # the rule is off
    ],
)
def test_tail_drops_at_a_full_port_with_rto_rule_buffer(tmp_path, rule, buffer, rtos, makespan_s):
    goal = tmp_path / "incast.goal"
    goal.write_text(INCAST)
    pred = commodel.predict(
        str(goal), platform_from_dict(tail_drop_platform(rule, buffer)), "tcpflow"
    )
    assert len(pred.rto_events) == rtos
    assert sum(m.rto for m in pred.messages) == rtos
    assert pred.makespan_s == pytest.approx(makespan_s)


def test_the_incast_rule_replaces_tail_drops_in_samples(tmp_path):
    # the platform of the tail-drop case above (every tail lost, 200 ms), plus escalation
    # statistics that never escalate these 10 kB messages (M1 = 20 kB): predict --samples
    # runs the measured statistics instead of the tail drops
    from commodel.lmo.incast import predict_samples
    from commodel.schedules import parse_goal

    goal = tmp_path / "incast.goal"
    goal.write_text(INCAST)
    doc = tail_drop_platform("buffer", [16384, 1 << 20])
    doc["many_to_one"] = {"n": [3, 4], "M1": [20000, 20000], "Mc": [None, None], "M2": 60000,
                          "levels": [0.2], "probability": []}  # fmt: skip
    platform = platform_from_dict(doc)
    assert commodel.predict(str(goal), platform, "tcpflow").makespan_s > 0.2
    runs = predict_samples(parse_goal(goal.read_text()), platform, "tcpflow", 4)
    assert runs.makespans_s == pytest.approx([0.3e-3 + 50e-6] * 4)
    assert runs.escalated_runs == 0


def test_pairs_run_in_groups_of_at_most_as_many_ranks_as_a_machine_has_cores():
    opts = E.validate_options(
        {"sizes": [4096, 65536], "alltoall_sizes": [4096], "fanout_sizes": [1024]}
    )
    nodes = list(range(8))
    # 8 ranks on one machine of 2 cores (two ranks report one core each: their union)
    machine, cores = E.machines([("b", [0])] * 4 + [("b", [1])] * 4)
    assert cores == {"b": 2}
    plan = E.plan(opts, nodes, machine, cores)
    assert [(p, g, fl) for p, m, g, fl in plan if p == "oneway" and m == 4096] == [
        ("oneway", g, [(2 * g, 2 * g + 1)]) for g in range(4)
    ]
    assert [fl for p, _, g, fl in plan if p == "exchange"][1] == [(2, 3), (3, 2)]
    assert [fl for p, m, _, fl in plan if p == "duplex" and m == 4096] == [[(0, 1), (1, 2), (2, 0)]]
    # from the eager limit (64 KiB) on, every pair at once, the ring of all 8
    big = [(p, g, len(fl)) for p, m, g, fl in plan if m == 65536 and p in E.PATTERNS]
    assert big == [("oneway", None, 4), ("exchange", None, 8), ("duplex", None, 8)]
    # alltoall and fanout: every node, as before
    assert [len(fl) for p, _, _, fl in plan if p in ("alltoall", "fanout")] == [56, 3]
    # 4 cores: two pairs a group, a ring of 4
    machine, cores = E.machines([("b", [0, 1, 2, 3])] * 8)
    assert E.groups([[f] for f in E.flows("oneway", nodes)], machine, cores) == [
        [(0, 1), (2, 3)],
        [(4, 5), (6, 7)],
    ]
    assert E.ring_nodes(nodes, machine, cores) == [0, 1, 2, 3]
    # machines of their own (distinct boot_ids, or none recorded): one group, the whole ring
    for info in ([(f"b{r}", [0]) for r in range(8)], [("", [0])] * 8):
        machine, cores = E.machines(info)
        plan = E.plan(opts, nodes, machine, cores)
        assert [g for p, _, g, _ in plan if p in ("oneway", "exchange")] == [None] * 4
        assert {len(fl) for p, _, _, fl in plan if p == "duplex"} == {8}
    # two machines of 2 cores, 4 nodes each: a group never holds 3 ranks of one machine
    machine, cores = E.machines([("x", [0, 1])] * 4 + [("y", [0, 1])] * 4)
    assert E.groups([[f] for f in E.flows("oneway", nodes)], machine, cores) == [
        [(0, 1)],
        [(2, 3), (4, 5)],
        [(6, 7)],
    ]


def test_the_models_one_way_time_takes_each_group_alone_and_its_cores():
    # Two groups of one pair on a machine of 2 cores: each pair had the cores to itself,
    # so its one-way time is the model's without the cpu section. Every pair at once (4
    # ranks on 2 cores, s = 2): the cpu section charges each send (s - 1) o_s(1 B) = 30 us
    # before it enters (the message ends at its arrival; the receive's (s - 1) o_r(1 B) =
    # 10 us comes after it).
    m = 4096
    doc = {
        **PLATFORM,
        "plogp": {"L": 50e-6, "sizes": [1, m], "o_s": [0, 0], "o_r": [0, 0], "g": [1e-8, 1e-5]},
        "cpu": {"cores": 2, "sizes": [1, m], "o_s": [30e-6, 30e-6], "o_r": [10e-6, 10e-6]},
    }  # fmt: skip
    t_m = m / 1e8 + 50e-6  # the wire time and L, as above
    grouped = [
        {**r, "extra": {"flow": 0, "group": g}}
        for g, pair in enumerate([(0, 1), (2, 3)])
        for r in flow_rows("oneway", m, [{pair: 1e-4}, {pair: 1e-4}])
    ]
    assert model_oneway(doc, grouped) == {m: pytest.approx(t_m, rel=1e-9)}
    at_once = flow_rows("oneway", m, [{(0, 1): 1e-4, (2, 3): 1e-4}])
    assert model_oneway(doc, at_once) == {m: pytest.approx(t_m + 30e-6, rel=1e-9)}
    # the later of two one-way flows pairs the groups' flows of one repetition
    grouped[0]["value_s"] = 3e-4  # group 0, repetition 0
    assert flows_by_round(grouped)[("oneway", m)][0] == {(0, 1): 3e-4, (2, 3): 1e-4}


@pytest.mark.mpi
@needs_mpi
def test_measure_efficiency_runs_the_pairs_a_machine_has_cores_for(tmp_path):
    # 4 ranks on this one machine: its cores (the union of the ranks' affinities, stored
    # as one machine sample a rank) decide the groups; with fewer than 4, the two pairs
    # run one after the other while the other pair sits out, and the fit still pairs
    # each exchange's flows
    db = tmp_path / "e.duckdb"
    res = run(4, "measure", "efficiency", "--db", str(db), "--sizes", "4KiB",
              "--alltoall-sizes", "4KiB", "--fanout-sizes", "1KiB", "--min-reps", "2",
              "--max-reps", "2", "--quiet")  # fmt: skip
    assert res.returncode == 0, res.stderr
    with ResultsDB(str(db), read_only=True) as rdb:
        rows = rdb.samples(1)
    info = [r for r in rows if r["quantity"] == "machine"]
    assert [r["src"] for r in info] == [0, 1, 2, 3]
    boots = {r["extra"]["boot_id"] for r in info}
    assert len(boots) == 1 and "" not in boots  # one kernel
    cores = len({c for r in info for c in r["extra"]["cpus"]})
    groups = {
        (r["extra"].get("group"), r["src"], r["dst"]) for r in rows if r["pattern"] == "oneway"
    }
    if cores < 4:
        assert groups == {(0, 0, 1), (1, 2, 3)}
    else:
        assert groups == {(None, 0, 1), (None, 2, 3)}
    ring = {(r["src"], r["dst"]) for r in rows if r["pattern"] == "duplex"}
    assert len(ring) == max(3, min(4, cores))
    fit = commodel_cmd("fit", "--db", str(db), "-o", str(tmp_path / "f.yaml"))
    assert fit.returncode == 0, fit.stderr
    assert 0 < load_platform(str(tmp_path / "f.yaml")).tcp.efficiency.exchange[0] <= 1


def test_efficiency_rounds_stop_at_the_ci_the_cap_or_the_budget():
    opts = E.validate_options({"min_reps": 3, "max_reps": 8, "budget": 3.0})
    noisy = {0: [1.0, 2.0, 3.0], 1: [1.0, 1.0, 1.0]}  # flow 0 far from its CI
    assert not E.enough(opts, [1.0, 1.0], noisy)  # below min_reps: never
    assert not E.enough(opts, [0.9, 0.9, 0.9], noisy)  # 2.7 s < 3 s, not converged
    assert E.enough(opts, [1.0, 1.0, 1.0], noisy)  # 3 s: the budget
    assert E.enough(opts, [0.1] * 8, noisy)  # max_reps
    steady = {0: [1.0, 1.0, 1.0], 1: [2.0, 2.0, 2.0]}
    assert E.enough(opts, [0.1, 0.1, 0.1], steady)  # converged
    no_budget = E.validate_options({"min_reps": 3, "max_reps": 8})
    assert not E.enough(no_budget, [5.0] * 7, noisy)
    with pytest.raises(commodel.errors.CommodelError, match="--budget"):
        E.validate_options({"budget": -1})


def narrow_backbone(pair):
    """Racks [2, 2], NICs 100 MB/s, a backbone of 80 MB/s; g(1 MB) = 13.5 ms, measured
    between the nodes of ``pair`` (None: the field left out, nodes 0 and 1)."""
    doc = {k: (dict(v) if isinstance(v, dict) else v) for k, v in PLATFORM.items()}
    doc["plogp"]["g"] = [0.0135]
    doc["network"]["backbone"] = 8e7
    del doc["tcp"]
    if pair is not None:
        doc["plogp"]["pair"] = pair
    return platform_from_dict(doc)


def one_way(src: int, dst: int) -> str:
    """A GOAL schedule of 4 ranks: one message of 1 MB from ``src`` to ``dst``."""
    ops = {src: f"s: send 1000000b to {dst} tag 0", dst: f"r: recv 1000000b from {src} tag 0"}
    blocks = [f"rank {r} {{\n{ops.get(r, '')}\n}}" for r in range(4)]
    return "num_ranks 4\n" + "\n".join(blocks) + "\n"


@pytest.mark.parametrize(
    "pair, src, dst, ms",
    [
        # pair within rack 0: b_p = b_a, work b_a g = 1.35 MB: 13.5 ms within a rack,
        # 16.875 ms through the 80 MB/s backbone.
        (None, 2, 3, 13.5),
        (None, 0, 2, 16.875),
        ([0, 1], 0, 2, 16.875),
        # pair across the backbone: g's 12.5 ms of wire at 80 MB/s is 10 ms at the NIC,
        # work b_a (g - m/b_p + m/b_a) = 1.1 MB: 11 ms within a rack, 13.75 ms across.
        ([1, 2], 2, 3, 11.0),
        ([1, 2], 0, 2, 13.75),
    ],
)
def test_g_s_wire_part_is_taken_at_the_sender_s_rate(tmp_path, pair, src, dst, ms):
    goal = tmp_path / "x.goal"
    goal.write_text(one_way(src, dst))
    p = commodel.predict(str(goal), narrow_backbone(pair), "tcpflow")
    assert p.makespan_s == pytest.approx(ms * 1e-3 + 50e-6, abs=1e-11)


@pytest.mark.parametrize(
    "pair, words",
    [
        ([0, 0], "two different"),
        ([0], "two different"),
        ([0, 1, 2], "two different"),
        ([0, 4], "< nodes (4)"),
        ([-1, 1], ">= 0"),
        ("01", "a list"),
    ],
)
def test_a_bad_plogp_pair_names_the_field(pair, words):
    with pytest.raises(PlatformError) as exc:
        narrow_backbone(pair)
    assert "plogp.pair" in str(exc.value) and words in str(exc.value), str(exc.value)
