"""The network topologies of platform files and the contention models plogpt and maxmin."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from commodel.errors import PlatformError
from commodel.platform import TreeNetwork, platform_from_dict
from conftest import EXAMPLES, needs_engine

PLOGP = {"L": 5e-5, "sizes": [0], "o_s": [0.0], "o_r": [0.0], "g": [1e-3], "S": None}

RACKS: dict[str, Any] = {
    "commodel_platform": 1,
    "name": "two-racks",
    "nodes": 8,
    "network": {
        "topology": "racks",
        "racks": 2,
        "nodes_per_rack": 4,
        "nic": "1Gbps",
        "nic_latency": "10us",
        "backbone": "1Gbps",
        "backbone_latency": "5us",
    },
    "plogp": PLOGP,
}


def test_racks_section_and_engine_params() -> None:
    platform = platform_from_dict(copy.deepcopy(RACKS), "racks.yaml")
    assert isinstance(platform.network, TreeNetwork)
    assert platform.network.racks == (4, 4)
    params = platform.engine_params("maxmin")
    assert params["topology"] == {
        "kind": "racks",
        "racks": [4, 4],
        "nic": 125e6,
        "nic_latency": 10_000_000,
        "backbone": 125e6,
        "backbone_latency": 5_000_000,
    }
    assert params["rtt_weights"] is True
    assert platform.engine_params("maxmin-plain")["rtt_weights"] is False
    assert platform.engine_params("plogpt")["g"] == [1_000_000_000]


def test_ranks_per_node_becomes_rank_to_node() -> None:
    data = copy.deepcopy(RACKS)
    data["ranks_per_node"] = 2
    params = platform_from_dict(data, "r.yaml").engine_params("maxmin")
    assert params["rank_to_node"][:5] == [0, 0, 1, 1, 2]
    assert len(params["rank_to_node"]) == 16


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"nic": 0}, "network.nic"),
        ({"backbone": "-1Gbps"}, "network.backbone"),
        ({"topology": "rack"}, "network.topology"),
        ({"racks": [4, 0]}, "network.racks[1]"),
        ({"nodes": 9}, "network.nodes"),
        ({"d": [1e-3]}, "network.d"),
        ({"backbone_kind": "copper"}, "network.backbone_kind"),
        ({"bogus": 1}, "network.bogus"),
    ],
)
def test_bad_network_names_the_field(change: dict[str, Any], field: str) -> None:
    data = copy.deepcopy(RACKS)
    data["network"].update(change)
    if "racks" in change:
        del data["network"]["nodes_per_rack"]
    with pytest.raises(PlatformError, match="racks\\.yaml: " + re.escape(field)):
        platform_from_dict(data, "racks.yaml")


def test_leaf_spine_and_crossbar() -> None:
    data = copy.deepcopy(RACKS)
    data["network"] = {
        "topology": "leaf-spine",
        "leaves": 2,
        "nodes_per_leaf": 4,
        "nic": 1e8,
        "oversubscription": 2,
    }
    params = platform_from_dict(data, "ls.yaml").engine_params("maxmin")
    assert params["topology"]["kind"] == "leaf-spine"
    assert params["topology"]["oversubscription"] == 2.0
    data["network"] = {"topology": "crossbar", "nodes": 8, "nic": 1e8}
    params = platform_from_dict(data, "cb.yaml").engine_params("plogpt")
    assert params["topology"] == {"kind": "crossbar", "nodes": 8, "nic": 1e8, "latency": 0}


@needs_engine
def test_plogpt_example_finishes_at_26(cli) -> None:
    result = cli(
        "predict",
        EXAMPLES / "schedules" / "plogpt-example.goal",
        "--platform",
        EXAMPLES / "platforms" / "plogpt-example.yaml",
        "--model",
        "plogpt",
        "--json",
    )
    assert result.code == 0, result.err
    import json

    out = json.loads(result.out)
    assert out["makespan_ps"] == 26 * 10**12
    assert [r["finish_s"] for r in out["ranks"]] == [23.0, 15.0, 15.0, 26.0]
    assert out["rto_events"] == []


@needs_engine
def test_backbone_quarter_slows_cross_rack_rounds_under_maxmin() -> None:
    from commodel import predict
    from commodel.schedules import collective

    data = copy.deepcopy(RACKS)
    data["network"]["backbone"] = "1Gbps"  # 4 nodes x 1 Gbit/s per rack: a quarter
    platform = platform_from_dict(data, "q.yaml")
    schedule = collective("alltoall-xor-pairwise", 8, 65536)
    mm = predict(schedule, platform, model="maxmin")
    data["network"]["backbone"] = "4Gbps"
    full = predict(schedule, platform_from_dict(data, "f.yaml"), model="maxmin")
    # 4 of 7 rounds cross racks; there 4 flows share 1 Gbit/s: 4x slower.
    per_round = 65536 / 125e6
    assert full.makespan_s == pytest.approx(
        3 * (per_round + 20e-6) + 4 * (per_round + 30e-6), rel=1e-6
    )
    assert mm.makespan_s == pytest.approx(
        3 * (per_round + 20e-6) + 4 * (4 * per_round + 30e-6), rel=1e-6
    )


@needs_engine
def test_unknown_model_and_missing_section_exit_2(cli) -> None:
    result = cli(
        "predict",
        EXAMPLES / "schedules" / "plogpt-example.goal",
        "--platform",
        "loggopsim-default",
        "--model",
        "plogpt",
    )
    assert result.code == 2
    assert "network" in result.err


def test_optical_backbone_saturation_for_zhu() -> None:
    data = copy.deepcopy(RACKS)
    data["network"].update({"backbone": "9.4Gbps", "nic": "940Mbps", "backbone_kind": "optical"})
    params = platform_from_dict(data, "o.yaml").engine_params("zhu")
    assert params["topology"]["backbone_saturation"] == 10
    assert params["asymmetric"] is True
    assert platform_from_dict(data, "o.yaml").engine_params("zhu-fair")["asymmetric"] is False
    data["network"]["saturation"] = 0
    with pytest.raises(PlatformError, match=r"network\.saturation"):
        platform_from_dict(data, "o.yaml")


@needs_engine
def test_zhu_two_in_one_out_through_the_api() -> None:
    from commodel import predict
    from commodel.schedules import parse_goal

    data = copy.deepcopy(RACKS)
    data["nodes"] = 4
    data["network"] = {"topology": "crossbar", "nodes": 4, "nic": "940Mbps"}
    text = (
        "num_ranks 4\nrank 0 {\na: recv 1175000b from 1\nb: recv 1175000b from 2\n"
        "c: send 1175000b to 3\n}\nrank 1 {\na: send 1175000b to 0\n}\n"
        "rank 2 {\na: send 1175000b to 0\n}\nrank 3 {\na: recv 1175000b from 0\n}\n"
    )
    platform = platform_from_dict(data, "z.yaml")
    zhu = predict(parse_goal(text), platform, model="zhu")
    fair = predict(parse_goal(text), platform, model="zhu-fair")
    assert zhu.makespan_s == pytest.approx(0.020, rel=1e-9)
    assert [r.finish_s for r in fair.ranks] == pytest.approx([0.020, 0.020, 0.020, 0.010])


@needs_engine
def test_predict_model_all_side_by_side(cli) -> None:
    result = cli(
        "predict",
        EXAMPLES / "schedules" / "plogpt-example.goal",
        "--platform",
        EXAMPLES / "platforms" / "plogpt-example.yaml",
        "--model",
        "all",
    )
    assert result.code == 0, result.err
    rows = {line.split()[0]: line for line in result.out.splitlines()[2:]}
    assert "26.000 s" in rows["plogpt"] and "3 (26.000 s)" in rows["plogpt"]
    assert "22.000 s" in rows["plogp"]  # no contention: 8 + 3 + 8 + 3
    assert "no `loggops` section" in rows["loggops"]


@needs_engine
def test_predict_gantt_writes_a_png(cli, tmp_path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "g.png"
    result = cli(
        "predict",
        EXAMPLES / "schedules" / "plogpt-example.goal",
        "--platform",
        EXAMPLES / "platforms" / "plogpt-example.yaml",
        "--model",
        "plogpt",
        "--gantt",
        out,
    )
    assert result.code == 0, result.err
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_route_level_by_topology() -> None:
    from commodel.report.gantt import route_level

    platform = platform_from_dict(copy.deepcopy(RACKS), "r.yaml")
    assert route_level(platform, 0, 3) == (1, "within a rack")
    assert route_level(platform, 0, 4) == (2, "across the backbone")
    tree = platform_from_dict(
        {
            "commodel_platform": 1,
            "name": "t",
            "nodes": 4,
            "network": {
                "topology": "binary-tree",
                "nodes": 4,
                "unidirectional": {"b": [1.0, 2.0], "d": [0.0, 0.0]},
            },
        },
        "t.yaml",
    )
    assert route_level(tree, 1, 2) == (2, "tree height 2")


@needs_engine
def test_demo_models_disagree_where_the_paper_says() -> None:
    """nomura2007, 32 ranks: PLogP always picks B (eq. 20); PlogPT picks A once RTOs hit
    (eq. 26: P_S(h, h+1) holds at h = 1 and 4 and the buffers fill from 32 KiB on)."""
    from commodel.alltoall_ab import run_demo

    rows = run_demo(sizes=[1024, 65536], models=["plogp", "plogpt", "maxmin"])
    small, large = rows
    assert small.faster("plogp").startswith("B") and large.faster("plogp").startswith("B")
    assert small.faster("plogpt").startswith("B")
    assert large.faster("plogpt").startswith("A")
    # B's PlogPT time carries exactly two RTOs more than its no-RTO part would.
    assert large.makespans["plogpt"]["B"] > large.makespans["plogpt"]["A"] + 0.3


def test_binary_tree_clamp_is_announced() -> None:
    data = {
        "commodel_platform": 1,
        "name": "t",
        "nodes": 4,
        "plogp": PLOGP,
        "network": {
            "topology": "binary-tree",
            "nodes": 4,
            "unidirectional": {"b": [1e6, 5e6], "d": [0.0, 0.0]},
        },
    }
    platform = platform_from_dict(data, "t.yaml")
    with pytest.warns(UserWarning, match=r"network\.unidirectional\.b\[1\] = 5e\+06"):
        params = platform.engine_params("plogpt")
    assert params["topology"]["b"] == [1e6, 5e6]  # the engine applies the clamp


# two-rack-8's shape: 100 Mbit/s NICs, 200 Mbit/s uplinks, 32 KiB ports toward the hosts.
TWO_RACK_8: dict[str, Any] = {
    "commodel_platform": 1,
    "name": "two-rack-8-like",
    "nodes": 8,
    "network": {
        "topology": "racks",
        "racks": 2,
        "nodes_per_rack": 4,
        "nic": "100Mbps",
        "backbone": "200Mbps",
        "d": [1e-4, 2e-4],
        "buffer": ["32KiB", "128KiB"],
    },
    "plogp": {
        "L": 5e-5,
        "sizes": [4096, 65536],
        "o_s": [0, 0],
        "o_r": [0, 0],
        "g": [327.68e-6, 5242.88e-6],
        "S": None,
    },
    "tcp": {"rto": 0.2, "eps_S": 1e-3, "eps_T": 1e-5, "rto_rule": "buffer"},
}


@pytest.mark.parametrize(
    ("change", "field", "problem"),
    [
        ({"tcp": {"rto_rule": "buffers"}}, "tcp.rto_rule", "did you mean 'buffer'"),
        ({"network": {"buffer": [1024, 2048, 4096]}}, "network.buffer", "h = 1..2, got 3"),
        ({"network": {"buffer": ["32KiB", 0]}}, "network.buffer[1]", "> 0 bytes"),
        ({"network": {"buffer": -5}}, "network.buffer", ">= 0 bytes"),
        ({"network": {"buffer": "lots"}}, "network.buffer", "size in bytes"),
        ({"network": {"buffer": None}}, "network.buffer", "tcp.rto_rule buffer needs"),
        ({"tcp": {"timeouts": [{"senders": 1, "size": 4096}]}}, "tcp.timeouts[0].senders", ">= 2"),
        ({"tcp": {"timeouts": [{"senders": 3, "size": 0}]}}, "tcp.timeouts[0].size", "at least 1"),
        ({"tcp": {"timeouts": [{"senders": 3}]}}, "tcp.timeouts[0].size", "missing"),
        (
            {"tcp": {"timeouts": [{"senders": 3, "size": 1, "fanout": 0}]}},
            "tcp.timeouts[0].fanout",
            ">= 1",
        ),
        ({"tcp": {"timeouts": [3, 4096]}}, "tcp.timeouts[0]", "mapping"),
        ({"tcp": {"timeouts": {"senders": 3, "size": 1}}}, "tcp.timeouts", "list"),
    ],
)
def test_bad_rto_rule_and_buffer_name_the_field(
    change: dict[str, Any], field: str, problem: str
) -> None:
    data = copy.deepcopy(TWO_RACK_8)
    for section, values in change.items():
        data[section].update(values)
    with pytest.raises(
        PlatformError, match=re.escape(f"b.yaml: {field}: ") + ".*" + re.escape(problem)
    ):
        platform_from_dict(data, "b.yaml")


def test_buffer_reaches_the_engine_params() -> None:
    params = platform_from_dict(copy.deepcopy(TWO_RACK_8), "b.yaml").engine_params("plogpt")
    assert params["rto_rule"] == "buffer"
    assert params["buffer"] == [32768, 131072]
    data = copy.deepcopy(TWO_RACK_8)
    data["network"]["buffer"] = "32KiB"  # one value: every height
    del data["tcp"]["rto_rule"]
    params = platform_from_dict(data, "b.yaml").engine_params("plogpt")
    assert params["rto_rule"] == "plogpt"
    assert params["buffer"] == [32768, 32768]


def test_timeouts_of_fan_in_reach_tcpflow_only() -> None:
    data = copy.deepcopy(TWO_RACK_8)
    data["tcp"]["timeouts"] = [
        {"senders": 7, "size": "32KiB"},
        {"senders": 7, "fanout": 7, "size": 4096},
    ]
    plat = platform_from_dict(data, "b.yaml")
    params = plat.engine_params("tcpflow")
    assert params["timeouts"] == [7, 1, 32768, 7, 7, 4096]
    assert params["rto"] == 200_000_000_000
    assert "timeouts" not in plat.engine_params("plogpt")


def _alltoall_b(cli, tmp_path, size: int):
    goal = tmp_path / f"b{size}.goal"
    made = cli("schedule", "alltoall-xor-post-all", "--ranks", "8", "--size", str(size), "-o", goal)
    assert made.code == 0, made.err
    return goal


@needs_engine
@pytest.mark.parametrize(
    ("rule", "size", "rtos"), [("plogpt", 4096, 8), ("buffer", 4096, 0), ("buffer", 65536, 8)]
)
def test_predict_plogpt_uses_the_rto_rule(cli, tmp_path, rule: str, size: int, rtos: int) -> None:
    # Alltoall B on 8 ranks: only the round-3 sends (height 1) see an Isend of height 2 enter
    # toward their node. eq. 14: d(1) b(1) = 1250 B < m; the buffer rule: 2 m bytes toward a
    # 32 KiB port (the case of crates/commodel-engine/tests/contention_plogpt.rs).
    import json

    import yaml

    data = copy.deepcopy(TWO_RACK_8)
    data["tcp"]["rto_rule"] = rule
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(data))
    result = cli(
        "predict",
        _alltoall_b(cli, tmp_path, size),
        "--platform",
        path,
        "--model",
        "plogpt",
        "--json",
    )
    assert result.code == 0, result.err
    out = json.loads(result.out)
    assert len(out["rto_events"]) == rtos
    g = {4096: 327_680_000, 65536: 5_242_880_000}[size]
    assert out["makespan_ps"] == 11 * g + 50_000_000 + (200 * 10**9 if rtos else 0)


@needs_engine
def test_buffer_rule_without_buffer_exits_2(cli, tmp_path) -> None:
    import yaml

    data = copy.deepcopy(TWO_RACK_8)
    del data["network"]["buffer"]
    path = tmp_path / "nobuf.yaml"
    path.write_text(yaml.safe_dump(data))
    result = cli(
        "predict", _alltoall_b(cli, tmp_path, 4096), "--platform", path, "--model", "plogpt"
    )
    assert result.code == 2
    assert "network.buffer: missing" in result.err
    assert "Traceback" not in result.err
