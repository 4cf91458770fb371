"""Models: which sections each needs and how they become the engine's parameters.

Each model is registered with :func:`register_model`: its name, a one-line summary, the
sections it needs and a converter ``Platform -> dict`` of engine parameters. The engine
takes times as integer picoseconds (:func:`ps`), rates in bytes per second, sizes in bytes.
The converters read a :class:`~commodel.platform.loading.Platform` through what
:class:`PlatformSections` declares of it (loading.py imports this module, not the reverse).
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from ..errors import CommodelError, ModelError, PlatformWarning
from ..units import seconds_to_ps
from .network import Network, TreeNetwork
from .sections import TCP, Cpu, Hockney, LogGOPS, PLogP


class PlatformSections(Protocol):
    """What the converters read of a platform (:class:`~commodel.platform.loading.Platform`
    has it): the placement of ranks on nodes and the validated sections."""

    @property
    def nodes(self) -> int: ...
    @property
    def ranks_per_node(self) -> int: ...
    @property
    def rank_to_node(self) -> tuple[int, ...] | None: ...
    @property
    def sections(self) -> Mapping[str, Any]: ...
    @property
    def loggops(self) -> LogGOPS | None: ...
    @property
    def plogp(self) -> PLogP | None: ...
    @property
    def network(self) -> Network | None: ...
    @property
    def tcp(self) -> TCP | None: ...
    def section(self, name: str, model: str | None = None) -> Any: ...


Converter = Callable[[PlatformSections], dict[str, Any]]


@dataclass(frozen=True)
class ModelSpec:
    name: str
    summary: str
    sections: tuple[str, ...]
    params: Converter


MODELS: dict[str, ModelSpec] = {}


def register_model(
    name: str, summary: str, sections: Sequence[str]
) -> Callable[[Converter], Converter]:
    """Decorator: register the converter of model ``name`` from platform to engine params."""

    def decorate(function: Converter) -> Converter:
        MODELS[name] = ModelSpec(name, summary, tuple(sections), function)
        return function

    return decorate


def model_names() -> list[str]:
    return sorted(MODELS)


# Without a loggops section, the default is the first of these the platform has sections for.
FALLBACK_MODELS = ("tcpflow", "plogp", "hockney", "maxmin")


def default_model(platform: PlatformSections) -> str:
    """The model to use when none is named: ``tcpflow`` on a calibrated platform (one with
    measured TCP efficiencies and the sections tcpflow needs), ``loggops`` otherwise; on a
    platform without a ``loggops`` section, the first of :data:`FALLBACK_MODELS` it has the
    sections for (``loggops`` when none: its error then names the section missing)."""
    tcp = platform.tcp
    calibrated = tcp is not None and tcp.efficiency is not None
    if calibrated and platform.plogp is not None and platform.network is not None:
        return "tcpflow"
    if platform.loggops is not None:
        return "loggops"
    return next((name for name in FALLBACK_MODELS if not lacking(platform, name)), "loggops")


def lacking(platform: PlatformSections, name: str) -> list[str]:
    """The sections model ``name`` needs that ``platform`` does not have (none: it can run)."""
    return [s for s in model_spec(name).sections if s not in platform.sections]


def model_spec(model: str) -> ModelSpec:
    """The registered model ``model``; a ModelError naming the known ones otherwise."""
    spec = MODELS.get(model)
    if spec is None:
        close = difflib.get_close_matches(model, list(MODELS), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ModelError(f"unknown model {model!r} (known: {', '.join(model_names())}){hint}")
    return spec


# LogGOPS's S for "every message is eager" (the engine takes an integer).
EAGER_ALWAYS = 2**62


def ps(value: float) -> int:
    """A time (s) in the engine's unit, integer picoseconds."""
    return seconds_to_ps(value)


def ps_per_byte(value: float) -> float:
    """A per-byte cost (s/B) in picoseconds per byte, not rounded (12 significant digits):
    the engine keeps a fraction of 2^-32 ps per byte."""
    return float(f"{value * 1e12:.12g}")


@register_model("loggops", "LogGOPS with LogGOPSim's semantics: L, o, g, G, O, S", ["loggops"])
def loggops_params(platform: PlatformSections) -> dict[str, Any]:
    p: LogGOPS = platform.section("loggops", "loggops")
    return {
        "L": ps(p.L),
        "o": ps(p.o),
        "g": ps(p.g),
        "G": ps_per_byte(p.G),
        "O": ps_per_byte(p.O),
        "S": EAGER_ALWAYS if p.S is None else p.S,
    }


@register_model("plogp", "Kielmann's parameterized LogP: L, o_s(m), o_r(m), g(m)", ["plogp"])
def plogp_params(platform: PlatformSections) -> dict[str, Any]:
    p: PLogP = platform.section("plogp", "plogp")
    params: dict[str, Any] = {
        "L": ps(p.L),
        "sizes": list(p.sizes),
        "o_s": [ps(v) for v in p.o_s],
        "o_r": [ps(v) for v in p.o_r],
        "g": [ps(v) for v in p.g],
        "S": p.S,
    }
    if p.bidirectional is not None:
        params["g_bidir"] = [ps(v) for v in p.bidirectional.g]
    return params


@register_model("hockney", "Hockney: alpha + beta * m per message", ["hockney"])
def hockney_params(platform: PlatformSections) -> dict[str, Any]:
    p: Hockney = platform.section("hockney", "hockney")
    return {"alpha": ps(p.alpha), "beta": ps_per_byte(p.beta), "S": p.S}


def topology_params(network: Network) -> dict[str, Any]:
    """The engine's ``topology`` object for a validated ``network`` section."""
    if isinstance(network, TreeNetwork):
        return _tree_network_params(network)
    _warn_clamp(network)
    out: dict[str, Any] = {
        "kind": "binary-tree",
        "nodes": network.nodes,
        "b": list(network.unidirectional.b),
        "d": [ps(v) for v in network.unidirectional.d],
    }
    if network.bidirectional is not None:
        out["b_bidir"] = list(network.bidirectional.b)
        out["d_bidir"] = [ps(v) for v in network.bidirectional.d]
    if network.latency is not None:
        out["latency"] = [ps(v) for v in network.latency]
    return out


def _tree_network_params(t: TreeNetwork) -> dict[str, Any]:
    if t.topology == "crossbar":
        out: dict[str, Any] = {
            "kind": "crossbar",
            "nodes": t.nodes,
            "nic": t.nic,
            "latency": ps(t.nic_latency),
        }
    elif t.topology == "racks":
        out = {
            "kind": "racks",
            "racks": list(t.racks),
            **({"members": list(t.members)} if t.members is not None else {}),
            "nic": t.nic,
            "nic_latency": ps(t.nic_latency),
            "backbone": t.backbone,
            "backbone_latency": ps(t.backbone_latency),
        }
    else:
        out = {
            "kind": "leaf-spine",
            "leaves": len(t.racks),
            "nodes_per_leaf": t.racks[0],
            "nic": t.nic,
            "oversubscription": t.oversubscription,
            "latency": ps(t.nic_latency),
        }
    if t.topology == "racks" and t.backbone_kind == "optical" and t.saturation:
        out["backbone_saturation"] = t.saturation
    if t.nic_bidir is not None and t.topology != "leaf-spine":
        out["nic_bidir"] = t.nic_bidir
    if t.d is not None:
        out["d"] = [ps(v) for v in t.d]
    return out


def _warn_clamp(network: Any) -> None:
    """PlogPT III-A: b(h+1) > 2 b(h) acts as 2 b(h) (the engine clamps); say so when the
    excess is more than 1 % (below that it is measurement noise, as in nomura2007's
    b(3) = 468.05e6 > 2 b(2) = 467.8e6)."""
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
                    PlatformWarning,
                    stacklevel=3,
                )
            b[h] = min(b[h], 2 * b[h - 1])


def cpu_params(platform: PlatformSections, model: str) -> dict[str, Any]:
    """The platform's ``cpu`` section (ranks sharing cores) as ``model`` takes it: the
    message-level models its C, o_s(m), o_r(m); ``loggops`` only C (its o and O are the CPU
    overheads the sharing stretches). Empty without the section."""
    cpu: Cpu | None = platform.sections.get("cpu")
    if cpu is None:
        return {}
    if model == "loggops":
        return {"cpu_cores": cpu.cores}
    return {
        "cpu": {
            "cores": cpu.cores,
            "sizes": list(cpu.sizes),
            "o_s": [ps(v) for v in cpu.o_s],
            "o_r": [ps(v) for v in cpu.o_r],
        }
    }


def model_params(
    platform: PlatformSections, model: str, ranks: int | None = None
) -> dict[str, Any]:
    """The parameters of ``model`` for ``platform`` in the engine's units
    (:meth:`Platform.engine_params <commodel.platform.loading.Platform.engine_params>`),
    with the placement of a schedule's ``ranks`` ranks for the models on a network."""
    spec = model_spec(model)
    placement = placement_params(platform, ranks) if "network" in spec.sections else {}
    return {**spec.params(platform), **cpu_params(platform, spec.name), **placement}


def incast_model(model: str) -> str:
    """The name of ``model`` if it can take the stochastic incast rule (every model but
    ``loggops``, which has no messages flowing into a node), else a ModelError."""
    spec = model_spec(model)
    if spec.name == "loggops":
        raise ModelError("the incast rule works with the message-level models, not loggops")
    return spec.name


def incast_params(
    platform: PlatformSections,
    model: str,
    incast: Mapping[str, Any],
    ranks: int | None = None,
) -> dict[str, Any]:
    """The parameters of ``model`` with Lastovetsky's stochastic incast rule (``predict
    --samples``; ``incast``: the engine's ``levels``, ``table`` and ``seed``, see
    :func:`commodel.lmo.incast.incast_table`): the model's own, the ranks' placement on
    nodes (the rule counts the messages flowing into one node), and for ``tcpflow`` the
    PlogPT timeout rule without the fan-in table: the measured escalations stand for the
    losses at full ports, so no tail drops and no fan-in delay on top."""
    name = incast_model(model)
    params = model_params(platform, name, ranks)
    params.update(placement_params(platform, ranks))
    if name == "tcpflow":
        params["rto_rule"] = "plogpt"
        if params.get("efficiency"):
            params["efficiency"] = {k: v for k, v in params["efficiency"].items() if k != "fanin"}
    params["incast"] = dict(incast)
    return params


def placement_params(platform: PlatformSections, ranks: int | None = None) -> dict[str, Any]:
    """``rank_to_node`` for the engine when ranks are not one per node: for the first
    ``ranks`` ranks (a schedule's), or every rank the platform holds (``None``; up to
    2**32 - 2, so give ``ranks`` when the platform may be large). The models on a network
    take it (:meth:`Platform.engine_params` adds it), and the incast rule."""
    if platform.rank_to_node is not None:
        return {"rank_to_node": list(platform.rank_to_node)}
    if platform.ranks_per_node > 1:
        per = platform.ranks_per_node
        held = platform.nodes * per
        return {
            "rank_to_node": [r // per for r in range(min(held, held if ranks is None else ranks))]
        }
    return {}


def _plogp_on_network(platform: PlatformSections, model: str) -> tuple[PLogP, dict[str, Any]]:
    """PLogP's L, g(m), S on the platform's network, and its port buffers: the parameters
    plogpt and tcpflow share."""
    p: PLogP = platform.section("plogp", model)
    network = platform.section("network", model)
    params = {
        "topology": topology_params(network),
        "L": ps(p.L),
        "sizes": list(p.sizes),
        "g": [ps(v) for v in p.g],
        "S": p.S,
    }
    if network.buffer is not None:  # the port buffers of tcp.rto_rule buffer
        params["buffer"] = list(network.buffer)
    return p, params


@register_model(
    "plogpt",
    "PlogPT: PLogP on a tree, bottleneck sharing (eq. 6-7) and the TCP RTO rule (eq. 14)",
    ["plogp", "network"],
)
def plogpt_params(platform: PlatformSections) -> dict[str, Any]:
    p, params = _plogp_on_network(platform, "plogpt")
    if p.bidirectional is not None:
        params["g_bidir"] = [ps(v) for v in p.bidirectional.g]
    tcp: TCP | None = platform.tcp
    if tcp is not None:
        params["rto"] = ps(tcp.rto)
        if tcp.eps_S is not None:
            params["eps_S"] = tcp.eps_S
        if tcp.eps_T is not None:
            params["eps_T"] = ps(tcp.eps_T)
        params["rto_rule"] = tcp.rto_rule
    return params


@register_model(
    "tcpflow",
    "PLogP per message, max-min sharing, TCP's measured efficiency both ways (calibrated)",
    ["plogp", "network"],
)
def tcpflow_params(platform: PlatformSections) -> dict[str, Any]:
    p, params = _plogp_on_network(platform, "tcpflow")
    if platform.section("network", "tcpflow").nodes >= 2:  # g(m)'s wire part at the
        params["pair"] = list(p.pair or (0, 1))  # measured pair's route (docs/models.md)
    tcp: TCP | None = platform.tcp
    if tcp is not None and tcp.efficiency is not None:
        e = tcp.efficiency
        params["efficiency"] = {
            "sizes": list(e.sizes),
            "exchange": list(e.exchange),
            "duplex": list(e.duplex),
        }
        if e.fanin is not None:
            params["efficiency"]["fanin"] = {
                "peers": e.fanin.peers,
                "sizes": list(e.fanin.sizes),
                "e": list(e.fanin.e),
            }
    if tcp is not None and tcp.fifo_limit is not None:
        params["fifo_limit"] = tcp.fifo_limit
    network = platform.section("network", "tcpflow")
    if network.bucket:  # token buckets: B at a node's link, as many seconds at faster ones
        params["bucket"] = network.bucket  # (docs/models.md)
    if network.overhead:  # h: a message's wire bytes beyond m (docs/models.md)
        params["overhead"] = network.overhead
    if network.ack:  # a: its acknowledgements' bytes in the reverse direction's buckets
        params["ack"] = network.ack
    if tcp is not None and tcp.timeouts is not None:
        # timeouts of fan-in (docs/models.md): rules [K, F, M, ...]
        params["timeouts"] = [x for r in tcp.timeouts for x in (r.senders, r.fanout, r.size)]
    if tcp is not None and tcp.port_timeouts is not None:
        # timeouts at ports between switches (docs/models.md): q(m)
        params["port_timeouts"] = {
            "sizes": list(tcp.port_timeouts[0]),
            "rate": list(tcp.port_timeouts[1]),
        }
    if tcp is not None and tcp.rto_rule == "buffer":
        # tail drops at full ports (docs/models.md): the port buffers
        params["rto_rule"] = tcp.rto_rule
    if tcp is not None and (
        tcp.timeouts is not None or tcp.port_timeouts is not None or tcp.rto_rule == "buffer"
    ):
        params["rto"] = ps(tcp.rto)  # T_RTO of these rules
    return params


def _maxmin(platform: PlatformSections, model: str, rtt_weights: bool) -> dict[str, Any]:
    network = platform.section("network", model)
    S = None
    if platform.plogp is not None:
        S = platform.plogp.S
    return {
        "topology": topology_params(network),
        "rtt_weights": rtt_weights,
        "S": S,
    }


@register_model(
    "maxmin",
    "max-min sharing weighted by route latency (SimGrid CM02 without TCP factors)",
    ["network"],
)
def maxmin_params(platform: PlatformSections) -> dict[str, Any]:
    return _maxmin(platform, "maxmin", True)


@register_model("maxmin-plain", "plain max-min sharing (no round-trip-time weights)", ["network"])
def maxmin_plain_params(platform: PlatformSections) -> dict[str, Any]:
    return _maxmin(platform, "maxmin-plain", False)


def _zhu(platform: PlatformSections, model: str, asymmetric: bool) -> dict[str, Any]:
    params = _maxmin(platform, model, False)
    del params["rtt_weights"]
    params["asymmetric"] = asymmetric
    return params


@register_model(
    "zhu",
    "Zhu et al.: NIC and backbone contention with the asymmetric bidirectional property",
    ["network"],
)
def zhu_params(platform: PlatformSections) -> dict[str, Any]:
    return _zhu(platform, "zhu", True)


@register_model(
    "zhu-fair", "Zhu et al.'s model with fairness only (no asymmetric property)", ["network"]
)
def zhu_fair_params(platform: PlatformSections) -> dict[str, Any]:
    return _zhu(platform, "zhu-fair", False)


def with_jitter(
    params: dict[str, Any],
    model: str,
    sigma: float,
    seed: int,
    by_size: tuple[list[int], list[float]] | None = None,
) -> dict[str, Any]:
    """``params`` of ``model`` with per-message noise: each message's bytes times
    exp(sigma Z - sigma^2 / 2), Z drawn from ``seed`` (the engine's ``jitter``; a
    prediction's spread, :mod:`commodel.spread`); with ``by_size`` (sizes, sigmas) sigma is
    sigma(m) at the message's size as scheduled, linear between the sizes. ``loggops``
    has no messages to scale."""
    if model == "loggops":
        raise CommodelError("loggops takes no per-message noise (its gaps are LogGOPSim's)")
    jitter: dict[str, Any] = {"sigma": float(sigma), "seed": int(seed)}
    if by_size is not None:
        jitter["sizes"] = [int(x) for x in by_size[0]]
        jitter["sigmas"] = [float(x) for x in by_size[1]]
    return {**params, "jitter": jitter}
