"""The ``network`` section: every topology, validated by one function.

Topologies (``network.topology``, see docs/formats.md):

* ``binary-tree`` -- PlogPT's perfect binary tree of ``nodes`` (a power of two) nodes
  (Nomura et al. III-A): per height h = 1..D the bandwidth b(h) (B/s) and buffer delay
  d(h) (s), measured one way (``unidirectional``) and optionally both ways
  (``bidirectional``); optional ``latency`` (s per height, for ``maxmin``).
* ``crossbar`` -- one switch: ``nic`` (B/s per direction), optional ``nic_bidir`` and
  ``latency`` (s per link).
* ``racks`` -- racks of nodes under one backbone switch: ``racks`` (nodes per rack, a list;
  a list of lists of node indices; or a count with ``nodes_per_rack``), ``nic``, ``nic_latency``, ``backbone`` (each rack's
  uplink, B/s per direction), ``backbone_latency``; ``backbone_kind`` (``electrical`` or
  ``optical``) and ``saturation`` (Zhu et al.'s optical threshold, a number of flows; for
  an optical backbone without it, backbone // nic) are used by ``zhu``.
* ``leaf-spine`` / ``fat-tree`` -- ``leaves``, ``nodes_per_leaf``, ``nic``,
  ``oversubscription`` (>= 1), ``latency``; the spines are folded into one root and each
  leaf's uplinks into one link of ``nodes_per_leaf * nic / oversubscription``.

Every topology but ``binary-tree`` may give ``d`` (s per height: 1 for node links, 2 for
rack uplinks), PlogPT's buffer delays, which ``plogpt``'s RTO rule needs. Every topology may
give ``buffer`` (bytes): the measured capacity of the switch port feeding a link of height h,
one value per height or one for all, which ``tcp.rto_rule: buffer`` needs (``plogpt``,
``tcpflow``), and ``bucket`` (bytes): the token bucket of a node's link (a faster link
holds as many seconds of its rate), through which ``tcpflow`` lets a small message pass at
once (``fit`` writes it from PLogP's g(m); 0 or absent: none), with ``overhead`` h and
``ack`` a (bytes): what a message puts on the wire beyond its payload, and what its
acknowledgements put into the reverse direction's buckets (``fit`` writes them from a
``wire`` campaign; absent: 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Union

from .fields import (
    MAX_NODES,
    MAX_U32,
    NODES_WHY,
    At,
    choice,
    describe,
    integer,
    mapping,
    node_count,
    number,
    number_list,
    rate,
    seconds,
    size,
)

TOPOLOGIES = ("binary-tree", "crossbar", "racks", "leaf-spine", "fat-tree")


@dataclass(frozen=True)
class TreeLevels:
    """Per-height bandwidth b(h) (bytes/s) and buffer delay d(h) (s), h = 1..D."""

    b: tuple[float, ...]
    d: tuple[float, ...]


@dataclass(frozen=True)
class BinaryTree:
    """PlogPT's binary tree, with optional per-height link latencies (s)."""

    topology: str
    nodes: int
    unidirectional: TreeLevels
    bidirectional: TreeLevels | None = None
    latency: tuple[float, ...] | None = None
    buffer: tuple[int, ...] | None = None  # B per height h = 1..D (port buffer capacity)
    bucket: int | None = None  # B, token bucket of a node's link (tcpflow)
    overhead: int | None = None  # h, wire bytes of a message beyond its payload (tcpflow)
    ack: int | None = None  # a, its acknowledgements' bytes the other way (tcpflow)


@dataclass(frozen=True)
class TreeNetwork:
    """A crossbar, racks or leaf-spine network (see the module documentation)."""

    topology: str
    nodes: int
    nic: float  # B/s per direction
    nic_bidir: float | None = None  # B/s, measured with traffic both ways
    nic_latency: float = 0.0  # s
    racks: tuple[int, ...] = ()  # nodes per rack (racks, leaf-spine)
    members: tuple[int, ...] | None = None  # racks: their nodes in rack order (None: 0..N-1)
    backbone: float | None = None  # B/s per direction of each rack's uplink
    backbone_latency: float = 0.0  # s
    backbone_kind: str = "electrical"  # or optical (Zhu et al.)
    saturation: int | None = None  # Zhu's optical saturation threshold, flows
    oversubscription: float = 1.0
    d: tuple[float, ...] | None = None  # s per height (PlogPT buffer delays)
    buffer: tuple[int, ...] | None = None  # B per height (port buffer capacity)
    bucket: int | None = None  # B, token bucket of a node's link (tcpflow)
    overhead: int | None = None  # h, wire bytes of a message beyond its payload (tcpflow)
    ack: int | None = None  # a, its acknowledgements' bytes the other way (tcpflow)


# The validated ``network`` section.
Network = Union[BinaryTree, TreeNetwork]


def validate_network(at: At, value: Any) -> Network:
    """Validate the ``network`` section, any topology of :data:`TOPOLOGIES`."""
    keys = tuple(value) if isinstance(value, dict) else ()
    mapping(at, value, required=("topology",), optional=keys)  # a mapping with a topology
    topology = choice(at.key("topology"), value["topology"], TOPOLOGIES, "topology")
    if topology == "binary-tree":
        return _binary_tree(at, value)
    return _tree_network(at, value, topology)


def _tree_levels(at: At, value: Any, height: int) -> TreeLevels:
    data = mapping(at, value, required=("b", "d"))
    b = number_list(at.key("b"), data["b"], rate)
    d = number_list(at.key("d"), data["d"], seconds)
    for key, values in (("b", b), ("d", d)):
        if len(values) != height:
            raise at.key(key).error(
                f"needs one value per tree height h = 1..{height} (log2 of the node count), "
                f"got {len(values)}"
            )
    return TreeLevels(b=tuple(b), d=tuple(d))


def _binary_tree(at: At, value: dict[str, Any]) -> BinaryTree:
    data = mapping(
        at,
        value,
        required=("topology",),
        optional=(
            "nodes",
            "unidirectional",
            "bidirectional",
            "latency",
            "buffer",
            "bucket",
            "overhead",
            "ack",
        ),
    )
    for key in ("nodes", "unidirectional"):
        if key not in data:
            raise at.key(key).error("missing (required for topology binary-tree)")
    nodes = node_count(at.key("nodes"), data["nodes"], minimum=2)
    if nodes & (nodes - 1):
        raise at.key("nodes").error(f"a binary tree needs a power of two nodes, got {nodes}")
    height = nodes.bit_length() - 1
    bidirectional = data.get("bidirectional")
    latency = None
    if data.get("latency") is not None:
        latency = tuple(number_list(at.key("latency"), data["latency"], seconds))
        if len(latency) != height:
            raise at.key("latency").error(
                f"needs one value per tree height h = 1..{height}, got {len(latency)}"
            )
    return BinaryTree(
        topology="binary-tree",
        nodes=nodes,
        unidirectional=_tree_levels(at.key("unidirectional"), data["unidirectional"], height),
        bidirectional=None
        if bidirectional is None
        else _tree_levels(at.key("bidirectional"), bidirectional, height),
        latency=latency,
        buffer=_buffer(at.key("buffer"), data.get("buffer"), height),
        bucket=size(at.key("bucket"), data.get("bucket"), allow_none=True),
        overhead=size(at.key("overhead"), data.get("overhead"), allow_none=True),
        ack=size(at.key("ack"), data.get("ack"), allow_none=True),
    )


def _at_least_one(at: At, value: Any) -> float:
    if isinstance(value, str):
        raise at.error(f"must be a number >= 1, got {describe(value)}")
    parsed = number(at, value, float, "a number >= 1")
    if parsed < 1:
        raise at.error(f"must be a number >= 1, got {describe(value)}")
    return parsed


def _tree_network(at: At, value: dict[str, Any], topology: str) -> TreeNetwork:
    common = ("topology", "nodes", "nic", "nic_bidir", "d", "buffer", "bucket", "overhead", "ack")
    if topology == "crossbar":
        data = mapping(at, value, required=("nic",), optional=(*common, "latency"))
        nodes = data.get("nodes")
        if nodes is None:
            raise at.key("nodes").error("missing (required for topology crossbar)")
        nodes = node_count(at.key("nodes"), nodes)
        racks: tuple[int, ...] = (nodes,)
        members = None
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
        racks, members = _racks(at, data)
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
        leaves = node_count(at.key("leaves"), data["leaves"])
        per = node_count(at.key("nodes_per_leaf"), data["nodes_per_leaf"])
        _at_most_max_nodes(at.key("leaves"), leaves * per, f"{leaves} leaves of {per} nodes")
        racks = (per,) * leaves
        members = None
        nodes = leaves * per
        nic_latency = seconds(at.key("latency"), data.get("latency", 0.0))
        over = _at_least_one(at.key("oversubscription"), data.get("oversubscription", 1.0))
        backbone = None
        backbone_latency = nic_latency
    if "nodes" in data and topology != "crossbar":
        given = integer(at.key("nodes"), data["nodes"], minimum=1, maximum=MAX_NODES, why=NODES_WHY)
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
        raise at.key("backbone_kind").error(f"must be electrical or optical, got {describe(kind)}")
    saturation = None
    if data.get("saturation") is not None:
        saturation = integer(at.key("saturation"), data["saturation"], minimum=1, maximum=MAX_U32)
    elif kind == "optical" and backbone is not None:
        saturation = max(1, min(MAX_U32, int(min(backbone / nic, MAX_U32))))
    return TreeNetwork(
        topology=topology,
        nodes=nodes,
        nic=nic,
        nic_bidir=nic_bidir,
        nic_latency=nic_latency,
        racks=racks,
        members=members,
        backbone=backbone,
        backbone_latency=backbone_latency,
        backbone_kind=kind,
        saturation=saturation,
        oversubscription=over,
        d=d,
        buffer=_buffer(at.key("buffer"), data.get("buffer"), 1 if topology == "crossbar" else 2),
        bucket=size(at.key("bucket"), data.get("bucket"), allow_none=True),
        overhead=size(at.key("overhead"), data.get("overhead"), allow_none=True),
        ack=size(at.key("ack"), data.get("ack"), allow_none=True),
    )


def _buffer(at: At, value: Any, heights: int) -> tuple[int, ...] | None:
    """``buffer``: port buffer capacity in bytes per height h = 1..``heights``, or one value
    for all; each > 0."""
    if value is None:
        return None
    given = number_list(at, value, size) if isinstance(value, list) else [size(at, value)]
    if len(given) not in (1, heights):
        raise at.error(f"needs one value or one per height h = 1..{heights}, got {len(given)}")
    for i, v in enumerate(given):
        if v == 0:
            raise (at.index(i) if isinstance(value, list) else at).error(
                "must be a buffer capacity > 0 bytes, got 0"
            )
    return tuple(given * heights if len(given) == 1 else given)


def _racks(at: At, data: dict[str, Any]) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
    """Nodes per rack, and the racks' nodes in rack order where they are named: a list of
    node counts (each rack a run of consecutive nodes), a list of lists of node indices (every
    node 0..N-1 in one rack), or a count of racks with ``nodes_per_rack``."""
    raw = data["racks"]
    if isinstance(raw, list):
        if "nodes_per_rack" in data:
            raise at.key("nodes_per_rack").error(
                "give racks as a list of node counts or as a count with nodes_per_rack, not both"
            )
        if raw and all(isinstance(r, list) for r in raw):
            lists = [
                number_list(
                    at.key("racks").index(i), r, lambda a, v: integer(a, v, 0, MAX_NODES - 1)
                )
                for i, r in enumerate(raw)
            ]
            _at_most_max_nodes(at.key("racks"), sum(len(r) for r in lists), "the racks")
            members = [m for r in lists for m in r]
            for i, r in enumerate(lists):
                if not r:
                    raise at.key("racks").index(i).error("must name at least one node")
            if sorted(members) != list(range(len(members))):
                raise at.key("racks").error(
                    f"the racks must hold each node 0..{len(members) - 1} exactly once, got "
                    f"{sorted(members)[:16]}"
                )
            return tuple(len(r) for r in lists), tuple(members)
        racks = tuple(number_list(at.key("racks"), raw, node_count))
        _at_most_max_nodes(at.key("racks"), sum(racks), f"racks of {sum(racks)} nodes in all")
        return racks, None
    count = node_count(at.key("racks"), raw)
    if "nodes_per_rack" not in data:
        raise at.key("nodes_per_rack").error("missing (required when racks is a count)")
    per = node_count(at.key("nodes_per_rack"), data["nodes_per_rack"])
    _at_most_max_nodes(at.key("racks"), count * per, f"{count} racks of {per} nodes")
    return (per,) * count, None


def _at_most_max_nodes(at: At, nodes: int, what: str) -> None:
    if nodes > MAX_NODES:
        raise at.error(f"{what} make {nodes} nodes; at most {MAX_NODES} ({NODES_WHY})")
