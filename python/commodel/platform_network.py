"""The ``network`` section's topologies and the contention models ``plogpt`` and ``maxmin``.

Imported by :mod:`commodel.platform` (at its end): it replaces the ``network`` validator
with one that knows every topology of docs/models.md and registers the models'
converters to engine parameters (integer picoseconds; rates in bytes per second).

Topologies (``network.topology``):

* ``binary-tree`` -- PlogPT's perfect binary tree (Nomura et al. III-A), validated by
  :mod:`commodel.platform`; here it may also carry ``latency`` (s per height, for
  ``maxmin``).
* ``crossbar`` -- one switch: ``nic`` (B/s per direction), optional ``nic_bidir`` and
  ``latency`` (s per link).
* ``racks`` -- racks of nodes under one backbone switch: ``racks`` (nodes per rack, a list,
  or a count with ``nodes_per_rack``), ``nic``, ``nic_latency``, ``backbone`` (each rack's
  uplink, B/s per direction), ``backbone_latency``; ``backbone_kind`` (``electrical`` or
  ``optical``) and ``saturation`` (Zhu et al.'s optical threshold, a number of flows; for
  an optical backbone without it, backbone // nic) are used by ``zhu``.
* ``leaf-spine`` / ``fat-tree`` -- ``leaves``, ``nodes_per_leaf``, ``nic``,
  ``oversubscription`` (>= 1), ``latency``; the spines are folded into one root and each
  leaf's uplinks into one link of ``nodes_per_leaf * nic / oversubscription``.

Every topology but ``binary-tree`` may give ``d`` (s per height: 1 for node links, 2 for
rack uplinks), PlogPT's buffer delays, which ``plogpt``'s RTO rule needs.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from . import platform as _platform
from .platform import (
    TCP,
    At,
    Network,
    Platform,
    PLogP,
    integer,
    mapping,
    number_list,
    rate,
    register_model,
    register_section,
    seconds,
)

TOPOLOGIES = ("binary-tree", "crossbar", "racks", "leaf-spine", "fat-tree")

_binary_tree_validator = _platform.SECTIONS["network"]


@dataclass(frozen=True)
class BinaryTree(Network):
    """PlogPT's binary tree, with optional per-height link latencies (s)."""

    latency: tuple[float, ...] | None = None


@dataclass(frozen=True)
class TreeNetwork:
    """A crossbar, racks or leaf-spine network (see the module documentation)."""

    topology: str
    nodes: int
    nic: float  # B/s per direction
    nic_bidir: float | None = None  # B/s, measured with traffic both ways
    nic_latency: float = 0.0  # s
    racks: tuple[int, ...] = ()  # nodes per rack (racks, leaf-spine)
    backbone: float | None = None  # B/s per direction of each rack's uplink
    backbone_latency: float = 0.0  # s
    backbone_kind: str = "electrical"  # or optical (Zhu et al.)
    saturation: int | None = None  # Zhu's optical saturation threshold, flows
    oversubscription: float = 1.0
    d: tuple[float, ...] | None = None  # s per height (PlogPT buffer delays)


def _positive_float(at: At, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 1:
        raise at.error(f"must be a number >= 1, got {value!r}")
    return float(value)


@register_section("network")
def validate_network(at: At, value: Any) -> Any:
    """Validate any topology of the module documentation."""
    if not isinstance(value, dict):
        return _binary_tree_validator(at, value)  # gives the standard message
    topology = value.get("topology")
    if topology == "binary-tree":
        latency = value.get("latency")
        base = _binary_tree_validator(at, {k: v for k, v in value.items() if k != "latency"})
        lat = None
        if latency is not None:
            lat = tuple(number_list(at.key("latency"), latency, seconds))
            height = len(base.unidirectional.b)
            if len(lat) != height:
                raise at.key("latency").error(
                    f"needs one value per tree height h = 1..{height}, got {len(lat)}"
                )
        return BinaryTree(
            topology=base.topology,
            nodes=base.nodes,
            unidirectional=base.unidirectional,
            bidirectional=base.bidirectional,
            latency=lat,
        )
    if topology not in TOPOLOGIES:
        close = difflib.get_close_matches(str(topology), TOPOLOGIES, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise at.key("topology").error(
            f"unknown topology {topology!r} (supported: {', '.join(TOPOLOGIES)}){hint}"
        )
    common = ("topology", "nodes", "nic", "nic_bidir", "d")
    if topology == "crossbar":
        data = mapping(at, value, required=("nic",), optional=(*common, "latency"))
        nodes = data.get("nodes")
        if nodes is None:
            raise at.key("nodes").error("missing (required for topology crossbar)")
        nodes = integer(at.key("nodes"), nodes, minimum=1)
        racks: tuple[int, ...] = (nodes,)
        nic_latency = seconds(at.key("latency"), data.get("latency", 0.0))
        backbone = None
        backbone_latency = 0.0
        over = 1.0
    elif topology == "racks":
        data = mapping(
            at,
            value,
            required=("racks", "nic", "backbone"),
            optional=(
                *common,
                "nodes_per_rack",
                "nic_latency",
                "backbone_latency",
                "backbone_kind",
                "saturation",
            ),
        )
        raw = data["racks"]
        if isinstance(raw, list):
            if "nodes_per_rack" in data:
                raise at.key("nodes_per_rack").error(
                    "give racks as a list of node counts or as a count with nodes_per_rack, "
                    "not both"
                )
            racks = tuple(number_list(at.key("racks"), raw, lambda a, v: integer(a, v, 1)))
        else:
            count = integer(at.key("racks"), raw, minimum=1)
            if "nodes_per_rack" not in data:
                raise at.key("nodes_per_rack").error("missing (required when racks is a count)")
            per = integer(at.key("nodes_per_rack"), data["nodes_per_rack"], minimum=1)
            racks = (per,) * count
        nodes = sum(racks)
        nic_latency = seconds(at.key("nic_latency"), data.get("nic_latency", 0.0))
        backbone = rate(at.key("backbone"), data["backbone"])
        backbone_latency = seconds(at.key("backbone_latency"), data.get("backbone_latency", 0.0))
        over = 1.0
    else:
        data = mapping(
            at,
            value,
            required=("leaves", "nodes_per_leaf", "nic"),
            optional=(*common, "oversubscription", "latency"),
        )
        leaves = integer(at.key("leaves"), data["leaves"], minimum=1)
        per = integer(at.key("nodes_per_leaf"), data["nodes_per_leaf"], minimum=1)
        racks = (per,) * leaves
        nodes = leaves * per
        nic_latency = seconds(at.key("latency"), data.get("latency", 0.0))
        over = _positive_float(at.key("oversubscription"), data.get("oversubscription", 1.0))
        backbone = None
        backbone_latency = nic_latency
    if "nodes" in data and topology != "crossbar":
        given = integer(at.key("nodes"), data["nodes"], minimum=1)
        if given != nodes:
            raise at.key("nodes").error(f"is {given} but the {topology} holds {nodes} nodes")
    nic = rate(at.key("nic"), data["nic"])
    nic_bidir = rate(at.key("nic_bidir"), data["nic_bidir"]) if "nic_bidir" in data else None
    d = None
    if data.get("d") is not None:
        d = tuple(number_list(at.key("d"), data["d"], seconds))
        heights = 1 if topology == "crossbar" else 2
        if len(d) != heights:
            raise at.key("d").error(
                f"needs one buffer delay per height h = 1..{heights} of a {topology}, got {len(d)}"
            )
    kind = data.get("backbone_kind", "electrical")
    if kind not in ("electrical", "optical"):
        raise at.key("backbone_kind").error(f"must be electrical or optical, got {kind!r}")
    saturation = None
    if data.get("saturation") is not None:
        saturation = integer(at.key("saturation"), data["saturation"], minimum=1)
    elif kind == "optical" and backbone is not None:
        saturation = max(1, int(backbone // nic))
    return TreeNetwork(
        topology=topology,
        nodes=nodes,
        nic=nic,
        nic_bidir=nic_bidir,
        nic_latency=nic_latency,
        racks=racks,
        backbone=backbone,
        backbone_latency=backbone_latency,
        backbone_kind=kind,
        saturation=saturation,
        oversubscription=over,
        d=d,
    )


def _ps(value: float) -> int:
    return _platform.seconds_to_ps(value)


def topology_params(network: Any) -> dict[str, Any]:
    """The engine's ``topology`` object for a validated ``network`` section."""
    if isinstance(network, TreeNetwork):
        t = network
        d = None if t.d is None else [_ps(v) for v in t.d]
        if t.topology == "crossbar":
            out: dict[str, Any] = {
                "kind": "crossbar",
                "nodes": t.nodes,
                "nic": t.nic,
                "latency": _ps(t.nic_latency),
            }
        elif t.topology == "racks":
            out = {
                "kind": "racks",
                "racks": list(t.racks),
                "nic": t.nic,
                "nic_latency": _ps(t.nic_latency),
                "backbone": t.backbone,
                "backbone_latency": _ps(t.backbone_latency),
            }
        else:
            out = {
                "kind": "leaf-spine",
                "leaves": len(t.racks),
                "nodes_per_leaf": t.racks[0],
                "nic": t.nic,
                "oversubscription": t.oversubscription,
                "latency": _ps(t.nic_latency),
            }
        if t.topology == "racks" and t.backbone_kind == "optical" and t.saturation:
            out["backbone_saturation"] = t.saturation
        if t.nic_bidir is not None and t.topology != "leaf-spine":
            out["nic_bidir"] = t.nic_bidir
        if d is not None:
            out["d"] = d
        return out
    # binary tree (commodel.platform.Network or BinaryTree)
    _warn_clamp(network)
    out = {
        "kind": "binary-tree",
        "nodes": network.nodes,
        "b": list(network.unidirectional.b),
        "d": [_ps(v) for v in network.unidirectional.d],
    }
    if network.bidirectional is not None:
        out["b_bidir"] = list(network.bidirectional.b)
        out["d_bidir"] = [_ps(v) for v in network.bidirectional.d]
    latency = getattr(network, "latency", None)
    if latency is not None:
        out["latency"] = [_ps(v) for v in latency]
    return out


def _warn_clamp(network: Any) -> None:
    """PlogPT III-A: b(h+1) > 2 b(h) acts as 2 b(h) (the engine clamps); say so when the
    excess is more than 1 % (below that it is measurement noise, as in nomura2007's
    b(3) = 468.05e6 > 2 b(2) = 467.8e6)."""
    import warnings

    tables = [("unidirectional", network.unidirectional)]
    if network.bidirectional is not None:
        tables.append(("bidirectional", network.bidirectional))
    for name, levels in tables:
        b = list(levels.b)
        for h in range(1, len(b)):
            if b[h] > 2.02 * b[h - 1]:
                warnings.warn(
                    f"network.{name}.b[{h}] = {b[h]:g} B/s exceeds 2 b({h}) = "
                    f"{2 * b[h - 1]:g} B/s; PlogPT treats it as {2 * b[h - 1]:g} (III-A)",
                    UserWarning,
                    stacklevel=3,
                )
            b[h] = min(b[h], 2 * b[h - 1])


def placement_params(platform: Platform) -> dict[str, Any]:
    """``rank_to_node`` for the engine when ranks are not one per node."""
    if platform.rank_to_node is not None:
        return {"rank_to_node": list(platform.rank_to_node)}
    if platform.ranks_per_node > 1:
        per = platform.ranks_per_node
        return {"rank_to_node": [r // per for r in range(platform.nodes * per)]}
    return {}


@register_model(
    "plogpt",
    "PlogPT: PLogP on a tree, bottleneck sharing (eq. 6-7) and the TCP RTO rule (eq. 14)",
    ["plogp", "network"],
)
def plogpt_params(platform: Platform) -> dict[str, Any]:
    p: PLogP = platform.section("plogp", "plogpt")
    network = platform.section("network", "plogpt")
    params: dict[str, Any] = {
        "topology": topology_params(network),
        "L": _ps(p.L),
        "sizes": list(p.sizes),
        "g": [_ps(v) for v in p.g],
        "S": p.S,
        **placement_params(platform),
    }
    if p.bidirectional is not None:
        params["g_bidir"] = [_ps(v) for v in p.bidirectional.g]
    tcp: TCP | None = platform.tcp
    if tcp is not None:
        params["rto"] = _ps(tcp.rto)
        if tcp.eps_S is not None:
            params["eps_S"] = tcp.eps_S
        if tcp.eps_T is not None:
            params["eps_T"] = _ps(tcp.eps_T)
    return params


def _maxmin(platform: Platform, model: str, rtt_weights: bool) -> dict[str, Any]:
    network = platform.section("network", model)
    S = None
    if platform.plogp is not None:
        S = platform.plogp.S
    return {
        "topology": topology_params(network),
        "rtt_weights": rtt_weights,
        "S": S,
        **placement_params(platform),
    }


@register_model(
    "maxmin",
    "max-min sharing weighted by route latency (SimGrid CM02 without TCP factors)",
    ["network"],
)
def maxmin_params(platform: Platform) -> dict[str, Any]:
    return _maxmin(platform, "maxmin", True)


@register_model("maxmin-plain", "plain max-min sharing (no round-trip-time weights)", ["network"])
def maxmin_plain_params(platform: Platform) -> dict[str, Any]:
    return _maxmin(platform, "maxmin-plain", False)


def _zhu(platform: Platform, model: str, asymmetric: bool) -> dict[str, Any]:
    params = _maxmin(platform, model, False)
    del params["rtt_weights"]
    params["asymmetric"] = asymmetric
    return params


@register_model(
    "zhu",
    "Zhu et al.: NIC and backbone contention with the asymmetric bidirectional property",
    ["network"],
)
def zhu_params(platform: Platform) -> dict[str, Any]:
    return _zhu(platform, "zhu", True)


@register_model(
    "zhu-fair", "Zhu et al.'s model with fairness only (no asymmetric property)", ["network"]
)
def zhu_fair_params(platform: Platform) -> dict[str, Any]:
    return _zhu(platform, "zhu-fair", False)
