"""Fan-in in ``tcpflow``: ``tcp.efficiency.fanin`` in platform files, its effect on a linear
alltoall, and its fit from ``measure efficiency``'s all-to-all rounds (docs/models.md,
*Fan-in*)."""

from __future__ import annotations

import copy

import pytest

from commodel.errors import PlatformError
from commodel.fit.fanin import alltoall_spans, fanin_section
from commodel.measure import efficiency as E
from commodel.platform import platform_from_dict
from commodel.platform.sections import FANIN_MAX
from commodel.prediction import predict
from commodel.schedules import collective

M = 262144

# Two racks of three nodes, 100 MB/s NICs, backbone 300 MB/s; g(m) = m / 100 MB/s.
PLATFORM = {
    "commodel_platform": 1,
    "name": "t",
    "nodes": 6,
    "plogp": {
        "L": 50e-6,
        "sizes": [1, M],
        "o_s": [1e-6, 1e-6],
        "o_r": [1e-6, 1e-6],
        "g": [1e-8, M / 1e8],
    },  # fmt: skip
    "network": {"topology": "racks", "racks": [3, 3], "nic": 1e8, "backbone": 3e8},
    "tcp": {"efficiency": {"sizes": [M], "exchange": [0.8], "duplex": [0.9]}},
}


def with_fanin(fanin):
    doc = copy.deepcopy(PLATFORM)
    if fanin is not None:
        doc["tcp"]["efficiency"]["fanin"] = fanin
    return doc


def alltoall(doc, name="alltoall-basic-linear", n=6, m=M):
    return predict(collective(name, n, m), platform_from_dict(doc), "tcpflow").makespan_s


def test_fan_in_slows_the_linear_alltoall_and_not_pairwise():
    # Every node of a linear alltoall has 5 senders at once; pairwise's one at a time.
    t0 = alltoall(with_fanin(None))
    t1 = alltoall(with_fanin({"peers": 5, "sizes": [M], "e": [0.5]}))
    t_half = alltoall(with_fanin({"peers": 9, "sizes": [M], "e": [0.5]}))
    assert t1 > t_half > t0 * 1.05  # measured with 9 senders, 5 count (5 - 1)/(9 - 1)
    p0 = alltoall(with_fanin(None), "alltoall-pairwise")
    p1 = alltoall(with_fanin({"peers": 5, "sizes": [M], "e": [0.5]}), "alltoall-pairwise")
    assert p1 == p0
    # e_f = 1 changes nothing
    assert alltoall(with_fanin({"peers": 5, "sizes": [M], "e": [1.0]})) == t0


@pytest.mark.parametrize(
    "fanin, field, words",
    [
        ({"peers": 1, "sizes": [M], "e": [0.5]}, "tcp.efficiency.fanin.peers", ">= 2"),
        ({"peers": 5, "sizes": [M], "e": [0]}, "tcp.efficiency.fanin.e[0]", "(0, 8]"),
        ({"peers": 5, "sizes": [M], "e": [8.5]}, "tcp.efficiency.fanin.e[0]", "(0, 8]"),
        ({"peers": 5, "sizes": [M, 1], "e": [1, 1]}, "tcp.efficiency.fanin.sizes", ""),
        ({"peers": 5, "sizes": [M], "e": [1, 1]}, "tcp.efficiency.fanin.e", "2"),
        ({"peers": 5, "sizes": [M]}, "tcp.efficiency.fanin", "e"),
        ({"peers": "five", "sizes": [M], "e": [1]}, "tcp.efficiency.fanin.peers", "'five'"),
    ],
)
def test_bad_fanin_names_the_field(fanin, field, words):
    with pytest.raises(PlatformError) as exc:
        platform_from_dict(with_fanin(fanin))
    assert field in str(exc.value) and words in str(exc.value)


def rounds(n, m, spans):
    """Samples of all-to-all rounds of ``n`` nodes at ``m`` bytes, one repetition per
    span: each repetition's last flow ends at its span, the others earlier."""
    fl = E.flows("alltoall", list(range(n)))
    rows = []
    for r, span in enumerate(spans):
        for i, (s, d) in enumerate(fl):
            t = span if i == len(fl) - 1 else span * 0.9
            rows.append({"phase": "efficiency", "quantity": "flow", "pattern": "alltoall",
                         "size_bytes": m, "repetition": r, "src": s, "dst": d, "value_s": t})  # fmt: skip
    return rows


def test_alltoall_rounds_send_from_every_node_to_every_other_in_linear_order():
    fl = E.flows("alltoall", [0, 1, 2, 3])
    assert fl[:4] == [(0, 3), (1, 0), (2, 1), (3, 2)]  # k = 1: to n_(i-1)
    assert sorted(fl) == [(a, b) for a in range(4) for b in range(4) if a != b]
    assert E.flows("alltoall", [0, 1]) == []


def test_the_fit_finds_the_e_f_that_predicts_the_rounds_median():
    # The rounds' median is the model's own prediction with e_f = 0.3 (peers 5): the fit
    # gets 0.3 back. The median, not the mean: a round with a timeout moves the mean.
    target = alltoall(with_fanin({"peers": 5, "sizes": [M], "e": [0.3]}))
    n, spans = alltoall_spans(rounds(6, M, [target * 0.9, target, target * 5]))
    assert n == 6 and spans == {M: pytest.approx(target)}
    table, note = fanin_section(with_fanin(None), n, spans)
    assert table["peers"] == 5 and table["sizes"] == [M]
    assert table["e"][0] == pytest.approx(0.3, abs=2e-4)


def test_rounds_faster_than_the_pair_losses_give_e_f_above_1():
    # e_x = 0.8, e_d = 0.9 slow the linear alltoall; a median 5% below the prediction
    # without fan-in gives the e_f > 1 that predicts it, a median below what max-min
    # itself allows gives FANIN_MAX and says so.
    base = alltoall(with_fanin(None))
    table, note = fanin_section(with_fanin(None), 6, {M: base * 0.95})
    assert 1 < table["e"][0] < FANIN_MAX
    assert "without fan-in 1.05x" in note
    got = alltoall(with_fanin({"peers": 5, "sizes": [M], "e": table["e"]}))
    assert got == pytest.approx(base * 0.95, rel=1e-3)
    plain = copy.deepcopy(PLATFORM)
    plain["tcp"]["efficiency"].update(exchange=[1.0], duplex=[1.0])
    floor = alltoall(plain)  # nothing lost both ways: max-min's own time
    assert alltoall(with_fanin({"peers": 5, "sizes": [M], "e": [FANIN_MAX]})) == floor
    table, note = fanin_section(with_fanin(None), 6, {M: floor * 0.9})
    assert table["e"] == [FANIN_MAX] and "not reached above 1" in note


def test_a_round_fan_in_cannot_reach_is_written_as_1_and_said():
    # Small messages in posting order (fifo_limit): a linear alltoall's nodes have one
    # sender at a time in the model, so e_f does not move it.
    doc = with_fanin(None)
    doc["tcp"]["fifo_limit"] = M
    base = alltoall(doc)
    table, note = fanin_section(doc, 6, {M: base * 3})
    assert table["e"] == [1.0]
    assert "not reached by fan-in" in note


def test_the_bisection_stops_early_and_writes_what_forty_steps_write(monkeypatch):
    """The bisection stops once every e left between its bounds is written alike; what
    it writes (4 decimals in the table, 3 in the comment) is then what the full STEPS
    steps write, at fewer predictions. The prediction here is a falling function of e
    (as tcpflow's is), the targets spread over the whole range and onto the rounding
    boundaries, where stopping early would show first."""
    import math

    from commodel.fit import fanin as F

    calls = []

    def predicted(doc, schedule, e):
        calls.append(e)
        return 1.0 / e

    def full(measured, lo, hi):
        for _ in range(F.STEPS):
            mid = (lo * hi) ** 0.5
            if 1.0 / mid >= measured:
                lo = mid
            else:
                hi = mid
        return hi

    monkeypatch.setattr(F, "_predicted", predicted)
    targets = [F.E_MIN * (1 / F.E_MIN) ** (k / 200) for k in range(1, 200)]
    targets += [0.12345, 0.12355, 0.5, 0.50005, 0.9999, 0.00105]  # on the 4th decimal's edges
    steps = []
    for e in targets:
        calls.clear()
        got = F._bisect(None, None, 1.0 / e, F.E_MIN, 1.0)
        steps.append(len(calls))
        assert F.written(got) == F.written(full(1.0 / e, F.E_MIN, 1.0)), e
        assert math.isclose(got, e, rel_tol=1e-3, abs_tol=1e-4)
    assert max(steps) <= F.STEPS
    assert sorted(steps)[len(steps) // 2] <= 20  # the median target: half the steps or fewer
