"""The bindings build the engine's typed model parameters from the platform's dicts and raise
the classes of commodel.errors themselves: messages name the model and the field."""

from __future__ import annotations

from typing import Any

import pytest

import commodel
from commodel import errors
from conftest import EXAMPLES, needs_engine

pytestmark = needs_engine

TWO = "num_ranks 2\nrank 0 {\ns: send 1000b to 1\n}\nrank 1 {\nr: recv 1000b from 0\n}\n"


def simulate(model: str, params: dict[str, Any], goal: str = TWO) -> dict[str, Any]:
    from commodel import _engine

    return dict(_engine.simulate(commodel.parse_goal(goal), model, params))


def params_of(model: str) -> dict[str, Any]:
    """The dict the platform loader builds for ``model``."""
    with_network = EXAMPLES / "platforms" / "plogpt-example.yaml"
    platform = with_network if model in ("plogpt", "maxmin") else "loggopsim-default"
    return dict(commodel.load_platform(platform).engine_params(model))


def model_error(model: str, params: dict[str, Any], goal: str = TWO) -> str:
    with pytest.raises(errors.ModelError) as info:
        simulate(model, params, goal)
    assert type(info.value) is errors.ModelError
    return str(info.value)


# --- one engine error, one class of commodel.errors ---------------------------------------


def test_deadlock_is_raised_as_the_one_deadlock_class() -> None:
    goal = "num_ranks 2\nrank 0 {\nwaiting: recv 8b from 1 tag 3\n}\nrank 1 {\n}\n"
    with pytest.raises(errors.DeadlockError) as info:
        simulate("loggops", params_of("loggops"), goal)
    assert type(info.value) is errors.DeadlockError
    assert errors.DeadlockError.__bases__ == (errors.ScheduleError,)
    assert str(info.value).startswith("the schedule cannot finish: 1 operation(s) stuck")
    assert "waiting" in str(info.value)


def test_the_engine_module_defines_no_exception_classes() -> None:
    from commodel import _engine

    assert not [n for n in dir(_engine) if n.endswith("Error")]


def test_other_engine_errors_arrive_as_their_class() -> None:
    with pytest.raises(errors.GoalError) as goal:
        commodel.parse_goal("num_ranks 1\nrank 0 {\nx: sned 8b to 0\n}\n", "bad.goal")
    with pytest.raises(errors.CollectiveError) as coll:
        commodel.collective("alltoall-magic", 4, 8)
    schedule = commodel.parse_goal(TWO)
    with pytest.raises(errors.ScheduleError) as rank:
        schedule.rank_ops(2)
    assert (type(goal.value), type(coll.value), type(rank.value)) == (
        errors.GoalError,
        errors.CollectiveError,
        errors.ScheduleError,
    )
    assert str(rank.value) == "rank 2 out of range: the schedule has 2 ranks"


def test_unknown_model() -> None:
    assert model_error("nope", {}) == (
        "unknown model `nope`; known models: loggops, plogp, hockney, plogpt, maxmin, "
        "maxmin-plain, zhu, zhu-fair, tcpflow"
    )


# --- fields: missing, wrong type, out of range ---------------------------------------------


def test_missing_and_mistyped_fields_name_model_and_field() -> None:
    p = params_of("loggops")
    del p["L"]
    assert model_error("loggops", p) == "model loggops: parameter `L` is missing"
    for bad, shown in [(-3, "-3"), (1.5, "1.5"), (True, "True"), ("5", "'5'")]:
        p = params_of("loggops")
        p["o"] = bad
        assert model_error("loggops", p) == (
            f"model loggops: parameter `o` must be a non-negative integer, got {shown}"
        )
    p = params_of("plogp")
    p["g"] = [1, "x" * 500]
    message = model_error("plogp", p)
    assert message.startswith("model plogp: parameter `g[1]` must be a non-negative integer")
    assert len(message) < 150, "a long bad value is cut"


def test_topology_fields() -> None:
    p = params_of("plogpt")
    p["topology"] = {"kind": "tree"}
    assert model_error("plogpt", p) == (
        'model plogpt: parameter `topology.kind` is "tree"; known kinds: crossbar, '
        "binary-tree, racks, leaf-spine, fat-tree"
    )
    p["topology"] = {"kind": "racks", "racks": [1, 1], "nic": 1.0}
    assert model_error("plogpt", p) == "model plogpt: parameter `topology.backbone` is missing"
    p["topology"] = {"kind": "binary-tree", "b": [3.0, 0.0]}
    assert model_error("plogpt", p) == (
        "model plogpt: parameter `topology.b[1]` must be a capacity > 0 bytes/s, got 0"
    )
    p["topology"] = "crossbar"
    assert "parameter `topology` must be a dict" in model_error("plogpt", p)


def test_rto_rule_and_buffer() -> None:
    p = params_of("plogpt")
    p["rto_rule"] = "buffers"
    assert model_error("plogpt", p) == (
        "model plogpt: parameter `rto_rule` must be one of plogpt, buffer, got 'buffers'"
    )
    p["rto_rule"] = "buffer"
    assert model_error("plogpt", p).startswith(
        "model plogpt: parameter `buffer` is required by rto_rule buffer"
    )
    p["buffer"] = [32768, -1]
    assert model_error("plogpt", p) == (
        "model plogpt: parameter `buffer[1]` must be a non-negative integer, got -1"
    )
    p["buffer"] = [32768]  # one value for every height; one message: no RTO either way
    plain = simulate("plogpt", params_of("plogpt"))
    assert simulate("plogpt", p)["makespan_ps"] == plain["makespan_ps"] > 0


def test_flags_must_be_booleans() -> None:
    p = params_of("maxmin")
    p["rtt_weights"] = "yes"
    assert model_error("maxmin", p) == (
        "model maxmin: parameter `rtt_weights` must be true or false, got 'yes'"
    )


def test_incast_fields() -> None:
    p = params_of("plogp")
    p["incast"] = {"levels": ["x"], "table": []}
    assert "parameter `incast.levels[0]` must be a non-negative integer" in model_error("plogp", p)
    p["incast"] = {"table": []}
    assert model_error("plogp", p) == "model plogp: parameter `incast.levels` is missing"
    p["incast"] = {"levels": [1], "table": [[3, 100, [1.5]]]}
    assert "`incast.table[0]` probabilities must be in [0, 1], got 1.5" in model_error("plogp", p)


# --- per-byte costs: an int or a float -------------------------------------------------------


def test_per_byte_costs_take_int_or_float() -> None:
    p = params_of("hockney")
    as_float = simulate("hockney", {**p, "beta": 8000.0})["makespan_ps"]
    as_int = simulate("hockney", {**p, "beta": 8000})["makespan_ps"]
    assert as_float == as_int == p["alpha"] + 1000 * 8000
    half = simulate("hockney", {**p, "beta": 8000.5})["makespan_ps"]
    assert half == p["alpha"] + 1000 * 8000 + 500
    p = params_of("loggops")
    assert (
        simulate("loggops", {**p, "G": float(p["G"])})["makespan_ps"]
        == simulate("loggops", p)["makespan_ps"]
    )
    # Per-byte costs keep their fraction: (s-1) G = 999 * 0.5 ps, rounded once (halves up).
    fractional = simulate("loggops", {**p, "G": 0.5})["makespan_ps"]
    assert fractional - simulate("loggops", {**p, "G": 0.0})["makespan_ps"] == 500
    assert model_error("loggops", {**p, "G": 2.0**32}) == (
        "model loggops: parameter `G` must be below 2^32 ps per byte, got 4294967296"
    )
    assert model_error("hockney", {**params_of("hockney"), "beta": -1.0}) == (
        "model hockney: parameter `beta` must be finite and >= 0, got -1"
    )
