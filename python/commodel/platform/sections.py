"""The top-level sections of a platform file: their dataclasses and validators.

Each section (``loggops``, ``plogp``, ``hockney``, ``network``, ``tcp``, ``lmo``,
``many_to_one``, ``cpu``) is validated by one function ``(At, raw YAML value) -> typed object``,
listed in :data:`SECTIONS`; :func:`register_section` adds a new one. Units inside: seconds,
bytes, bytes per second, seconds per byte (see :mod:`commodel.platform.fields`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import PlatformWarning
from .fields import (
    MAX_U32,
    At,
    choice,
    integer,
    mapping,
    node_count,
    number,
    number_list,
    rate,
    same_length,
    seconds,
    seconds_per_byte,
    size,
)
from .many_to_one import validate_many_to_one
from .network import validate_network


@dataclass(frozen=True)
class LogGOPS:
    """LogGOPS parameters with LogGOPSim's meaning (model ``loggops``)."""

    L: float  # s, latency
    o: float  # s, CPU overhead per message
    g: float  # s, gap between messages
    G: float  # s/B, gap per byte
    O: float  # s/B, CPU overhead per byte  # noqa: E741
    S: int | None  # B, messages larger than S use rendezvous; None: every message is eager


@dataclass(frozen=True)
class Escalation:
    """Where the measured g(m) samples of a size were bimodal: the escalated mode's g(m)
    and the fraction of the samples in it (the table holds the normal mode)."""

    sizes: tuple[int, ...]  # B, a subset of plogp.sizes, increasing
    level: tuple[float, ...]  # s, g(m) of the escalated mode
    frequency: tuple[float, ...]  # in (0, 1]


@dataclass(frozen=True)
class PLogPTables:
    """PLogP tables over message sizes; the uni- or bidirectional measurement."""

    o_s: tuple[float, ...] | None
    o_r: tuple[float, ...] | None
    g: tuple[float, ...]
    escalation: Escalation | None = None


@dataclass(frozen=True)
class PLogP:
    """Kielmann's parameterized LogP (model ``plogp``)."""

    L: float  # s
    sizes: tuple[int, ...]  # B, strictly increasing
    o_s: tuple[float, ...]  # s
    o_r: tuple[float, ...]  # s
    g: tuple[float, ...]  # s
    S: int | None  # B; None: every message is eager
    bidirectional: PLogPTables | None = None
    escalation: Escalation | None = None
    # the two nodes g(m) was measured between (Kielmann's ranks 0 and 1 as calibrate
    # places them); None: nodes 0 and 1. tcpflow takes g(m)'s wire part at their route.
    pair: tuple[int, int] | None = None


@dataclass(frozen=True)
class Hockney:
    """T(m) = alpha + beta * m (model ``hockney``)."""

    alpha: float  # s
    beta: float  # s/B
    S: int | None = None


@dataclass(frozen=True)
class TcpEfficiency:
    """TCP's measured efficiency e(m) when traffic runs both ways (model ``tcpflow``):
    ``exchange`` e_x(m) while the reverse flow of the same pair of nodes is in flight,
    ``duplex`` e_d(m) when the flow's reverse path (where its ACKs go) is fully loaded."""

    sizes: tuple[int, ...]  # bytes, increasing
    exchange: tuple[float, ...]  # dimensionless, in (0, 1]
    duplex: tuple[float, ...]  # dimensionless, in (0, 1]
    fanin: TcpFanIn | None = None


@dataclass(frozen=True)
class TcpFanIn:
    """e_f(m) of a flow into a node that ``peers`` nodes send to at once, measured in
    all-to-all rounds (model ``tcpflow``; docs/models.md)."""

    peers: int  # senders into each node in the rounds measured, >= 2
    sizes: tuple[int, ...]  # bytes, increasing
    e: tuple[float, ...]  # dimensionless, in (0, 1]


@dataclass(frozen=True)
class TCP:
    """TCP constants: the retransmission timeout, PlogPT's thresholds eps_S, eps_T, the rule
    that decides a buffer overflowed (``plogpt``: eq. 14's P_B; ``buffer``: the measured
    port buffers ``network.buffer``), the measured efficiency of traffic both ways, and the
    largest message a node's NIC sends in posting order (``tcpflow``, measured), the
    spread sigma of one flow's time and the model's own error sigma_m (a prediction's
    interval, :mod:`commodel.spread`)."""

    rto: float = 0.2  # s
    eps_S: float | None = None  # dimensionless (PlogPT eq. 5)
    eps_T: float | None = None  # s (PlogPT eq. 14)
    efficiency: TcpEfficiency | None = None
    rto_rule: str = "plogpt"  # one of RTO_RULES
    fifo_limit: int | None = None  # B, the largest message a NIC sends in posting order
    spread: float | None = None  # sigma of the log of one flow's time (a prediction's spread)
    # sigma(m) of one message's time by its size, (sizes, sigma), from rounds where every
    # node sends and receives; the noise takes max(spread, sigma(m))
    spread_by_size: tuple[tuple[int, ...], tuple[float, ...]] | None = None
    model_error: float | None = (
        None  # sigma_m, 1.4826 x median |ln(measured / predicted)| (check part)
    )
    timeouts: tuple[TimeoutRule, ...] | None = None  # timeouts of fan-in (tcpflow, measured)
    # timeouts at ports between switches (tcpflow, measured): (sizes, q), q(m) the chance
    # that a message sharing such a port with another loses its tail (T_RTO late)
    port_timeouts: tuple[tuple[int, ...], tuple[float, ...]] | None = None

    def noise_by_size(self) -> tuple[list[int], list[float]] | None:
        """The noise's sigma(m) table, max(``spread``, ``spread_by_size``) at each size;
        None without ``spread_by_size``."""
        if self.spread_by_size is None:
            return None
        sizes, sigma = self.spread_by_size
        return list(sizes), [max(self.spread or 0.0, s) for s in sigma]


@dataclass(frozen=True)
class TimeoutRule:
    """One rule of ``tcp.timeouts``: K = ``senders`` nodes or more, each sending messages of
    at least M = ``size`` bytes to F = ``fanout`` nodes or more (1: any), sending such
    messages to one node at once cost one of them a retransmission timeout (``tcpflow``,
    docs/models.md, *Timeouts of fan-in*; ``measure ports``)."""

    senders: int
    size: int
    fanout: int = 1


RTO_RULES = ("plogpt", "buffer")


@dataclass(frozen=True)
class Cpu:
    """Cores shared by every rank of a run (an emulated cluster on one machine). Ranks
    busy-poll while they wait, so P ranks on C < P cores each get C / P of a core and their
    CPU work takes s = P / C times as long: each message adds (s - 1) o_s(m) at its sender
    and (s - 1) o_r(m) at its receiver, a calc runs s times its duration (every model; in
    ``loggops`` o and O are s times as large). o_s(m), o_r(m) are measured on a core of
    their own (PLogP's, eager sizes); beyond the last size the last value holds."""

    cores: int  # C
    sizes: tuple[int, ...]  # B, strictly increasing
    o_s: tuple[float, ...]  # s
    o_r: tuple[float, ...]  # s


@dataclass(frozen=True)
class LMO:
    """Lastovetsky's LMO point-to-point constants per node (section 4.1)."""

    C: tuple[float, ...]  # s, fixed delay of node i
    t: tuple[float, ...]  # s/B, per-byte delay of node i
    beta: tuple[tuple[float | None, ...], ...]  # B/s, link rate i -> j (None: unknown/self)


def validate_loggops(at: At, value: Any) -> LogGOPS:
    data = mapping(at, value, required=("L", "o", "g", "G", "O", "S"))
    return LogGOPS(
        L=seconds(at.key("L"), data["L"]),
        o=seconds(at.key("o"), data["o"]),
        g=seconds(at.key("g"), data["g"]),
        G=seconds_per_byte(at.key("G"), data["G"]),
        O=seconds_per_byte(at.key("O"), data["O"]),
        S=size(at.key("S"), data["S"], allow_none=True),
    )


def _increasing_sizes(at: At, value: Any) -> list[int]:
    sizes = number_list(at, value, size)
    for i in range(1, len(sizes)):
        if sizes[i] <= sizes[i - 1]:
            raise at.index(i).error(
                f"sizes must be strictly increasing: got {sizes[i]} after {sizes[i - 1]}"
            )
    return sizes


def _table(at: At, data: dict, key: str, sizes_at: At, sizes: list[int]) -> tuple[float, ...]:
    values = number_list(at.key(key), data[key], seconds)
    same_length(at.key(key), values, sizes_at, sizes)
    _warn_if_decreasing(at.key(key), key, values, sizes)
    return tuple(values)


def _warn_if_decreasing(at: At, symbol: str, values: list[float], sizes: list[int]) -> None:
    """PLogP's o_s(m), o_r(m) and g(m) grow with m; a table that falls is likely a typo or a
    noisy measurement: warn at its first decrease (the model still runs)."""
    for i in range(1, len(values)):
        if values[i] < values[i - 1]:
            warnings.warn(
                f"{at}: {symbol}({sizes[i]} B) = {values[i]:g} s is less "
                f"than {symbol}({sizes[i - 1]} B) = {values[i - 1]:g} s; PLogP's {symbol}(m) "
                "should not decrease with m",
                PlatformWarning,
                stacklevel=2,
            )
            return


def _escalation(at: At, value: Any, sizes: list[int]) -> Escalation | None:
    """``escalation: {sizes, level, frequency}`` (see :class:`Escalation`)."""
    if value is None:
        return None
    data = mapping(at, value, required=("sizes", "level", "frequency"))
    esc_sizes = _increasing_sizes(at.key("sizes"), data["sizes"])
    for i, m in enumerate(esc_sizes):
        if m not in sizes:
            raise at.key("sizes").index(i).error(f"{m} is not one of plogp.sizes")
    level = number_list(at.key("level"), data["level"], seconds)
    same_length(at.key("level"), level, at.key("sizes"), esc_sizes)

    def fraction(item_at: At, v: Any) -> float:
        f = number(item_at, v, float, "a number")
        if not 0.0 < f <= 1.0:
            raise item_at.error(f"must be a fraction in (0, 1], got {f:g}")
        return f

    frequency = number_list(at.key("frequency"), data["frequency"], fraction)
    same_length(at.key("frequency"), frequency, at.key("sizes"), esc_sizes)
    return Escalation(sizes=tuple(esc_sizes), level=tuple(level), frequency=tuple(frequency))


def validate_plogp(at: At, value: Any) -> PLogP:
    data = mapping(
        at,
        value,
        required=("L", "sizes", "o_s", "o_r", "g"),
        optional=("S", "bidirectional", "escalation", "pair"),
    )
    sizes_at = at.key("sizes")
    pair = None
    if data.get("pair") is not None:
        pair_at = at.key("pair")
        nodes = number_list(pair_at, data["pair"], lambda a, v: node_count(a, v, minimum=0))
        if len(nodes) != 2 or nodes[0] == nodes[1]:
            raise pair_at.error(f"must be two different node indices, got {data['pair']!r}")
        pair = (nodes[0], nodes[1])
    sizes = _increasing_sizes(sizes_at, data["sizes"])
    bidirectional = None
    if data.get("bidirectional") is not None:
        bat = at.key("bidirectional")
        bdata = mapping(
            bat, data["bidirectional"], required=("g",), optional=("o_s", "o_r", "escalation")
        )
        bidirectional = PLogPTables(
            o_s=_table(bat, bdata, "o_s", sizes_at, sizes) if "o_s" in bdata else None,
            o_r=_table(bat, bdata, "o_r", sizes_at, sizes) if "o_r" in bdata else None,
            g=_table(bat, bdata, "g", sizes_at, sizes),
            escalation=_escalation(bat.key("escalation"), bdata.get("escalation"), sizes),
        )
    return PLogP(
        L=seconds(at.key("L"), data["L"]),
        sizes=tuple(sizes),
        o_s=_table(at, data, "o_s", sizes_at, sizes),
        o_r=_table(at, data, "o_r", sizes_at, sizes),
        g=_table(at, data, "g", sizes_at, sizes),
        S=size(at.key("S"), data.get("S"), allow_none=True),
        bidirectional=bidirectional,
        escalation=_escalation(at.key("escalation"), data.get("escalation"), sizes),
        pair=pair,
    )


def validate_hockney(at: At, value: Any) -> Hockney:
    data = mapping(at, value, required=("alpha", "beta"), optional=("S",))
    return Hockney(
        alpha=seconds(at.key("alpha"), data["alpha"]),
        beta=seconds_per_byte(at.key("beta"), data["beta"]),
        S=size(at.key("S"), data.get("S"), allow_none=True),
    )


def _efficiency_value(at: At, value: Any) -> float:
    e = number(at, value, float, "a number in (0, 1]")
    if not 0 < e <= 1:
        raise at.error(f"must be in (0, 1] (a fraction of the max-min share), got {e:g}")
    return e


FANIN_MAX = 8.0  # the engine's tcpflow::FANIN_MAX


def _fanin_value(at: At, value: Any) -> float:
    e = number(at, value, float, f"a number in (0, {FANIN_MAX:g}]")
    if not 0 < e <= FANIN_MAX:
        raise at.error(f"must be in (0, {FANIN_MAX:g}], got {e:g}")
    return e


def validate_tcp_efficiency(at: At, value: Any) -> TcpEfficiency:
    data = mapping(at, value, required=("sizes", "exchange", "duplex"), optional=("fanin",))
    sizes_at = at.key("sizes")
    sizes = _increasing_sizes(sizes_at, data["sizes"])
    tables = {}
    for key in ("exchange", "duplex"):
        values = number_list(at.key(key), data[key], _efficiency_value)
        same_length(at.key(key), values, sizes_at, sizes)
        tables[key] = tuple(values)
    fanin = data.get("fanin")
    return TcpEfficiency(
        sizes=tuple(sizes),
        **tables,
        fanin=None if fanin is None else validate_tcp_fanin(at.key("fanin"), fanin),
    )


def validate_tcp_fanin(at: At, value: Any) -> TcpFanIn:
    data = mapping(at, value, required=("peers", "sizes", "e"))
    sizes_at = at.key("sizes")
    sizes = _increasing_sizes(sizes_at, data["sizes"])
    e = number_list(at.key("e"), data["e"], _fanin_value)
    same_length(at.key("e"), e, sizes_at, sizes)
    return TcpFanIn(
        peers=node_count(at.key("peers"), data["peers"], 2), sizes=tuple(sizes), e=tuple(e)
    )


def validate_tcp(at: At, value: Any) -> TCP:
    data = mapping(
        at,
        value,
        optional=(
            "rto", "eps_S", "eps_T", "efficiency", "rto_rule", "fifo_limit", "spread",
            "spread_by_size", "model_error", "timeouts", "port_timeouts",
        ),
    )  # fmt: skip
    eps_s = data.get("eps_S")
    if eps_s is not None:
        eps_s = number(at.key("eps_S"), eps_s, float, "a number")
        if eps_s < 0:
            raise at.key("eps_S").error(f"must be >= 0, got {eps_s}")
    eps_t = data.get("eps_T")
    return TCP(
        rto=seconds(at.key("rto"), data.get("rto", 0.2), positive=True),
        eps_S=eps_s,
        eps_T=None if eps_t is None else seconds(at.key("eps_T"), eps_t),
        efficiency=(
            None
            if data.get("efficiency") is None
            else validate_tcp_efficiency(at.key("efficiency"), data["efficiency"])
        ),
        rto_rule=choice(at.key("rto_rule"), data.get("rto_rule", "plogpt"), RTO_RULES, "rule"),
        fifo_limit=size(at.key("fifo_limit"), data.get("fifo_limit"), allow_none=True),
        spread=_spread(at.key("spread"), data.get("spread")),
        spread_by_size=_spread_by_size(at.key("spread_by_size"), data.get("spread_by_size")),
        model_error=_spread(at.key("model_error"), data.get("model_error")),
        timeouts=_timeouts(at.key("timeouts"), data.get("timeouts")),
        port_timeouts=_port_timeouts(at.key("port_timeouts"), data.get("port_timeouts")),
    )


def _port_timeouts(at: At, value: Any) -> tuple[tuple[int, ...], tuple[float, ...]] | None:
    """``tcp.port_timeouts``: ``sizes`` (bytes >= 1, increasing) and a ``rate`` q in [0, 1]
    for each."""
    if value is None:
        return None
    data = mapping(at, value, required=("sizes", "rate"))
    sizes = number_list(at.key("sizes"), data["sizes"], size)

    def probability(item_at: At, item: Any) -> float:
        q = number(item_at, item, float, "a probability")
        if not 0.0 <= q <= 1.0:
            raise item_at.error(f"must be a probability in [0, 1], got {q}")
        return q

    rate = number_list(at.key("rate"), data["rate"], probability)
    same_length(at.key("rate"), rate, at.key("sizes"), sizes)
    for k, m in enumerate(sizes):
        if m < 1 or (k and m <= sizes[k - 1]):
            raise at.key("sizes").index(k).error(f"sizes must increase from 1 byte, got {m}")
    return tuple(sizes), tuple(rate)


def _timeouts(at: At, value: Any) -> tuple[TimeoutRule, ...] | None:
    """``tcp.timeouts``: a list of rules, each ``senders`` (a node count >= 2), ``size``
    (bytes >= 1) and optionally ``fanout`` (a node count >= 1, default 1)."""
    if value is None:
        return None

    def rule(item_at: At, item: Any) -> TimeoutRule:
        data = mapping(item_at, item, required=("senders", "size"), optional=("fanout",))
        m = size(item_at.key("size"), data["size"])
        if m < 1:
            raise item_at.key("size").error(f"must be at least 1 byte, got {m}")
        return TimeoutRule(
            senders=node_count(item_at.key("senders"), data["senders"], 2),
            size=m,
            fanout=node_count(item_at.key("fanout"), data.get("fanout", 1), 1),
        )

    return tuple(number_list(at, value, rule))


def _spread_by_size(at: At, value: Any) -> tuple[tuple[int, ...], tuple[float, ...]] | None:
    """``tcp.spread_by_size``: ``sizes`` (bytes, increasing) and a ``sigma`` for each."""
    if value is None:
        return None
    data = mapping(at, value, required=("sizes", "sigma"))
    sizes = number_list(at.key("sizes"), data["sizes"], size)
    sigma = number_list(at.key("sigma"), data["sigma"], _sigma)
    same_length(at.key("sigma"), sigma, at.key("sizes"), sizes)
    for k in range(1, len(sizes)):
        if sizes[k] <= sizes[k - 1]:
            raise (
                at.key("sizes")
                .index(k)
                .error(f"sizes must increase: {sizes[k]} after {sizes[k - 1]}")
            )
    return tuple(sizes), tuple(sigma)


def _spread(at: At, value: Any) -> float | None:
    """``tcp.spread``, ``tcp.model_error``: sigma in [0, 10] (of the log of a time)."""
    if value is None:
        return None
    return _sigma(at, value)


def _sigma(at: At, value: Any) -> float:
    """A spread sigma in [0, 10] (of the log of a time)."""
    sigma = number(at, value, float, "a number")
    if not 0 <= sigma <= 10:
        raise at.error(f"must be a spread sigma in [0, 10], got {sigma}")
    return sigma


def validate_lmo(at: At, value: Any) -> LMO:
    data = mapping(at, value, required=("C", "t", "beta"))
    c = number_list(at.key("C"), data["C"], seconds)
    t = number_list(at.key("t"), data["t"], seconds_per_byte)
    same_length(at.key("t"), t, at.key("C"), c)

    def rate_or_none(item_at: At, v: Any) -> float | None:
        return None if v is None else rate(item_at, v)

    rows = number_list(at.key("beta"), data["beta"], lambda a, v: number_list(a, v, rate_or_none))
    same_length(at.key("beta"), rows, at.key("C"), c)
    for i, row in enumerate(rows):
        same_length(at.key("beta").index(i), row, at.key("C"), c)
    return LMO(C=tuple(c), t=tuple(t), beta=tuple(tuple(r) for r in rows))


def validate_cpu(at: At, value: Any) -> Cpu:
    data = mapping(at, value, required=("cores", "sizes", "o_s", "o_r"))
    sizes_at = at.key("sizes")
    sizes = _increasing_sizes(sizes_at, data["sizes"])
    return Cpu(
        cores=integer(at.key("cores"), data["cores"], minimum=1, maximum=MAX_U32),
        sizes=tuple(sizes),
        o_s=_table(at, data, "o_s", sizes_at, sizes),
        o_r=_table(at, data, "o_r", sizes_at, sizes),
    )


SectionValidator = Callable[[At, Any], Any]

# Top-level section name -> validator, in the order they are checked; the validator gets
# the section's field path and its raw YAML value, and returns a typed object (or raises
# PlatformError via ``at``).
SECTIONS: dict[str, SectionValidator] = {
    "loggops": validate_loggops,
    "plogp": validate_plogp,
    "hockney": validate_hockney,
    "network": validate_network,
    "tcp": validate_tcp,
    "lmo": validate_lmo,
    "many_to_one": validate_many_to_one,
    "cpu": validate_cpu,
}


def register_section(name: str) -> Callable[[SectionValidator], SectionValidator]:
    """Decorator: register the validator of a new top-level section ``name``."""

    def decorate(function: SectionValidator) -> SectionValidator:
        SECTIONS[name] = function
        return function

    return decorate
