"""Cluster spec files (YAML): load and validate.

A spec describes the emulated cluster to build (see docs/cluster.md for the full reference)::

    commodel_cluster: 1          # format version (optional)
    name: two-rack-8             # optional; the default cluster id is derived from it
    hosts: 8                     # a count (hosts h0..h7) or a list of host names
    nic_rate: 100Mbit            # every host's data NIC
    topology:
      type: racks                # or binary-tree
      racks: 2                   # a count, or a list of rack sizes / lists of host names
      backbone_rate: 200Mbit     # each rack switch <-> core switch link, each direction
    buffers:                     # switch port buffers (tc tbf limit), bytes
      host_nic: 1MiB             # queue of each host's data NIC
      switch_port: 32KiB         # switch port toward a host
      backbone_port: 128KiB      # switch port on an inter-switch link
    tcp:
      congestion_control: cubic  # cubic, reno or bbr
      rto_min_ms: 200            # minimum TCP retransmission timeout, milliseconds
    mtu: 1500
    shaping: tbf                 # or serialize (every frame at line rate; see docs)
    switching: store-and-forward # or cut-through (with shaping: serialize only)
    host_queue: fifo             # or fair: a queue per destination, served in turn (tbf only)

Rates take tc-style units (``100Mbit``, ``1Gbit``, ``500kbit``) or the units of
:mod:`commodel.units` (``100Mbps``, ``12.5MB/s``; a bare number is bytes per second); sizes
take ``32KiB``, ``1MiB`` or plain bytes. Every error names the file and the field.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UnitsError
from ..platform.fields import describe
from ..units import parse_rate, parse_size
from .util import ClusterError

FORMAT_VERSION = 1
CONGESTION_CONTROLS = ("cubic", "reno", "bbr")
# serialize: every frame takes its line-rate time on every port (the commodel-serialize daemon);
# tbf: token-bucket shapers (an idle port lets a burst through at once).
SHAPINGS = ("serialize", "tbf")
# store-and-forward: a switch port sends a frame on once all of it has arrived; cut-through:
# once its destination address has (where it comes in at least as fast as it goes out).
SWITCHINGS = ("store-and-forward", "cut-through")
# fifo: a host's NIC sends its frames in the order its sockets queued them (tbf's own queue);
# fair: one queue per destination host, served in turn a frame at a time, as the fq_codel
# that a Debian host's NIC has by default serves its flows (with shaping: tbf only).
HOST_QUEUES = ("fifo", "fair")
MAX_HOSTS = 1000
RESERVED_NAMES = ("sw", "ctl")
HOST_NAME = re.compile(r"^[a-z][a-z0-9]{0,15}$")
CLUSTER_ID = re.compile(r"^[a-z0-9]{1,16}$")

DEFAULT_BUFFERS = {"host_nic": 1024 * 1024, "switch_port": 32 * 1024, "backbone_port": 128 * 1024}


@dataclass(frozen=True)
class RacksTopology:
    """Rack switches joined by a core switch (one rack: a single switch, no core)."""

    racks: tuple[tuple[int, ...], ...]  # host indices per rack
    backbone_rate_bit_s: int  # rack switch <-> core switch, each direction

    kind = "racks"


@dataclass(frozen=True)
class TreeTopology:
    """A perfect binary tree of switches with 2**D hosts at the leaves (PlogPT Fig. 6).

    ``level_rates_bit_s[h-1]`` is b(h), the rate of each edge at height h (h = 1 is the host
    links, so b(1) is the NIC rate).
    """

    level_rates_bit_s: tuple[int, ...]

    kind = "binary-tree"

    @property
    def depth(self) -> int:
        return len(self.level_rates_bit_s)


@dataclass(frozen=True)
class ClusterSpec:
    source: str
    name: str
    description: str
    hosts: tuple[str, ...]
    nic_rate_bit_s: int
    topology: RacksTopology | TreeTopology
    host_nic_buffer: int
    switch_port_buffer: int
    backbone_port_buffer: int
    congestion_control: str
    rto_min_ms: float
    mtu: int
    shaping: str = "tbf"
    switching: str = "store-and-forward"
    host_queue: str = "fifo"
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def default_id(self) -> str:
        """A cluster id derived from the spec name: lower-case letters and digits only."""
        ident = re.sub(r"[^a-z0-9]", "", self.name.lower())[:16]
        return ident or "cluster"


class _At:
    """The file and field path of a value, for error messages."""

    def __init__(self, source: str, path: str = "") -> None:
        self.source = source
        self.path = path

    def key(self, name: str) -> _At:
        return _At(self.source, f"{self.path}.{name}" if self.path else name)

    def index(self, i: int) -> _At:
        return _At(self.source, f"{self.path}[{i}]")

    def error(self, message: str) -> ClusterError:
        where = f"{self.source}: {self.path}" if self.path else self.source
        return ClusterError(f"{where}: {message}")


def _mapping(at: _At, value: Any, required: Sequence[str], optional: Sequence[str]) -> dict:
    if not isinstance(value, dict):
        raise at.error(f"must be a mapping of keys to values, got {describe(value)}")
    known = list(required) + list(optional)
    for key in value:
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; known keys: {', '.join(known)}"
            raise at.key(str(key)).error(f"unknown key{hint}")
    for key in required:
        if key not in value:
            raise at.key(key).error("is required")
    return value


_TC_RATE = re.compile(r"^\s*([0-9.eE+-]+)\s*([kmgt]?)bit(?:/s)?\s*$", re.IGNORECASE)
_TC_FACTORS = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}


def parse_rate_bits(value: Any) -> float:
    """A rate in bits per second from ``"100Mbit"``, ``"100Mbps"``, ``"12.5MB/s"`` or a number
    of bytes per second (the convention of :mod:`commodel.units`)."""
    if isinstance(value, str):
        match = _TC_RATE.match(value)
        if match:
            try:
                number = float(match.group(1))
            except ValueError:
                raise UnitsError(f"cannot read {value!r} as a rate") from None
            return number * _TC_FACTORS[match.group(2).lower()]
    return parse_rate(value) * 8


def _rate(at: _At, value: Any) -> int:
    try:
        bits = parse_rate_bits(value)
    except UnitsError as exc:
        raise at.error(str(exc)) from None
    if not 1e5 <= bits <= 1e11:
        raise at.error(
            f"must be between 100kbit and 100Gbit, got {describe(value)} ({bits:.4g} bit/s)"
        )
    return int(round(bits))


def _size(at: _At, value: Any, low: int, high: int) -> int:
    try:
        nbytes = parse_size(value)
    except UnitsError as exc:
        raise at.error(str(exc)) from None
    if not low <= nbytes <= high:
        raise at.error(f"must be between {low} and {high} bytes, got {describe(value)}")
    return nbytes


def _int(at: _At, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise at.error(f"must be an integer, got {describe(value)}")
    if not low <= value <= high:
        raise at.error(f"must be between {low} and {high}, got {value}")
    return value


def _hosts(at: _At, value: Any) -> tuple[str, ...]:
    if isinstance(value, int) and not isinstance(value, bool):
        count = _int(at, value, 1, MAX_HOSTS)
        return tuple(f"h{i}" for i in range(count))
    if not isinstance(value, list) or not value:
        raise at.error(
            f"must be a host count or a non-empty list of host names, got {describe(value)}"
        )
    if len(value) > MAX_HOSTS:
        raise at.error(f"at most {MAX_HOSTS} hosts, got {len(value)}")
    seen: set[str] = set()
    for i, name in enumerate(value):
        where = at.index(i)
        if not isinstance(name, str) or not HOST_NAME.match(name):
            raise where.error(
                f"host names are 1-16 lower-case letters and digits starting with a letter, "
                f"got {describe(name)}"
            )
        if name in RESERVED_NAMES:
            raise where.error(f"{name!r} is reserved (the switch and controller namespaces)")
        if name in seen:
            raise where.error(f"duplicate host name {name!r}")
        seen.add(name)
    return tuple(value)


def _racks(at: _At, topo: dict, hosts: tuple[str, ...]) -> RacksTopology:
    _mapping(at, topo, ["type", "backbone_rate"], ["racks", "hosts_per_rack"])
    backbone = _rate(at.key("backbone_rate"), topo["backbone_rate"])
    racks_value = topo.get("racks", 1)
    n = len(hosts)
    index_of = {name: i for i, name in enumerate(hosts)}
    racks: list[tuple[int, ...]]
    if isinstance(racks_value, int) and not isinstance(racks_value, bool):
        count = _int(at.key("racks"), racks_value, 1, n)
        per_rack = topo.get("hosts_per_rack")
        if per_rack is None:
            if n % count:
                raise at.key("racks").error(
                    f"{n} hosts do not split evenly into {count} racks; give hosts_per_rack "
                    "or a list of rack sizes"
                )
            per_rack = n // count
        per_rack = _int(at.key("hosts_per_rack"), per_rack, 1, n)
        if per_rack * count != n:
            raise at.key("hosts_per_rack").error(
                f"{count} racks of {per_rack} hosts make {per_rack * count}, but hosts has {n}"
            )
        racks = [tuple(range(r * per_rack, (r + 1) * per_rack)) for r in range(count)]
    elif isinstance(racks_value, list) and racks_value:
        if "hosts_per_rack" in topo:
            raise at.key("hosts_per_rack").error("give either a list of racks or hosts_per_rack")
        racks = []
        next_host = 0
        used: set[int] = set()
        for r, entry in enumerate(racks_value):
            where = at.key("racks").index(r)
            if isinstance(entry, int) and not isinstance(entry, bool):
                size = _int(where, entry, 1, n)
                members = tuple(range(next_host, next_host + size))
                next_host += size
            elif isinstance(entry, list) and entry:
                members_list = []
                for k, name in enumerate(entry):
                    if not isinstance(name, str):
                        raise where.index(k).error(f"must be a host name, got {describe(name)}")
                    if name not in index_of:
                        raise where.index(k).error(f"unknown host {name!r} (not in hosts)")
                    members_list.append(index_of[name])
                members = tuple(members_list)
            else:
                raise where.error(
                    f"must be a number of hosts or a list of host names, got {describe(entry)}"
                )
            for i in members:
                if i >= n:
                    raise where.error(f"the racks hold more hosts than the {n} in hosts")
                if i in used:
                    raise where.error(f"host {hosts[i]!r} is in two racks")
                used.add(i)
            racks.append(members)
        if len(used) != n:
            missing = [hosts[i] for i in range(n) if i not in used]
            raise at.key("racks").error(f"hosts not in any rack: {', '.join(missing[:8])}")
    else:
        raise at.key("racks").error(
            f"must be a rack count or a list of racks, got {describe(racks_value)}"
        )
    return RacksTopology(racks=tuple(racks), backbone_rate_bit_s=backbone)


def _tree(at: _At, topo: dict, hosts: tuple[str, ...], nic: int | None) -> TreeTopology:
    _mapping(at, topo, ["type", "levels"], [])
    levels = topo["levels"]
    if not isinstance(levels, list) or not levels:
        raise at.key("levels").error(
            "must be a list with one entry per tree height 1..D ({rate: 100Mbit}), got "
            f"{levels!r}"
        )
    rates = []
    for h, entry in enumerate(levels):
        where = at.key("levels").index(h)
        if isinstance(entry, dict):
            _mapping(where, entry, ["rate"], [])
            rates.append(_rate(where.key("rate"), entry["rate"]))
        else:
            rates.append(_rate(where, entry))
    depth = len(rates)
    if len(hosts) != 2**depth:
        raise at.key("levels").error(
            f"a binary tree with {depth} levels has {2**depth} hosts, but hosts has {len(hosts)}"
        )
    if nic is not None and nic != rates[0]:
        raise (
            at.key("levels")
            .index(0)
            .error(
                f"height 1 is the host links: its rate must equal nic_rate ({nic} bit/s), "
                f"got {rates[0]} bit/s (or leave nic_rate out)"
            )
        )
    return TreeTopology(level_rates_bit_s=tuple(rates))


def _one_of(at: _At, top: dict, key: str, choices: Sequence[str], default: str) -> str:
    """``top[key]`` (``default`` when absent), which must be one of ``choices``."""
    value = top.get(key, default)
    if value not in choices:
        raise at.key(key).error(f"must be one of {', '.join(choices)}, got {str(value)[:40]!r}")
    return value


def parse_spec(data: Any, source: str) -> ClusterSpec:
    """Validate a spec already read from YAML; ``source`` names it in error messages."""
    at = _At(source)
    top = _mapping(
        at,
        data,
        ["hosts", "topology"],
        [
            "commodel_cluster",
            "name",
            "description",
            "nic_rate",
            "buffers",
            "tcp",
            "mtu",
            "shaping",
            "switching",
            "host_queue",
        ],
    )
    version = top.get("commodel_cluster", FORMAT_VERSION)
    if version != FORMAT_VERSION:
        raise at.key("commodel_cluster").error(
            f"unsupported format version {version!r} (this commodel reads {FORMAT_VERSION})"
        )
    name = top.get("name", Path(source).stem)
    if not isinstance(name, str) or not name.strip():
        raise at.key("name").error(f"must be a non-empty string, got {describe(name)}")
    description = top.get("description", "")
    if not isinstance(description, str):
        raise at.key("description").error(f"must be a string, got {describe(description)}")
    hosts = _hosts(at.key("hosts"), top["hosts"])
    nic = _rate(at.key("nic_rate"), top["nic_rate"]) if "nic_rate" in top else None

    topo = top["topology"]
    tat = at.key("topology")
    if not isinstance(topo, dict):
        raise tat.error(
            f"must be a mapping with a type (racks or binary-tree), got {describe(topo)}"
        )
    kind = topo.get("type")
    topology: RacksTopology | TreeTopology
    if kind == "racks":
        if nic is None:
            raise at.key("nic_rate").error("is required with topology type racks")
        topology = _racks(tat, topo, hosts)
    elif kind == "binary-tree":
        topology = _tree(tat, topo, hosts, nic)
        nic = topology.level_rates_bit_s[0]
    else:
        raise tat.key("type").error(f"must be 'racks' or 'binary-tree', got {describe(kind)}")
    assert nic is not None

    mtu = _int(at.key("mtu"), top.get("mtu", 1500), 576, 9000)
    buffers = dict(DEFAULT_BUFFERS)
    if "buffers" in top:
        bat = at.key("buffers")
        given = _mapping(bat, top["buffers"], [], list(DEFAULT_BUFFERS))
        for key, value in given.items():
            buffers[key] = _size(bat.key(key), value, mtu + 14, 1 << 30)

    tcp = top.get("tcp", {})
    cat = at.key("tcp")
    _mapping(cat, tcp, [], ["congestion_control", "rto_min_ms"])
    cc = tcp.get("congestion_control", "cubic")
    if cc not in CONGESTION_CONTROLS:
        raise cat.key("congestion_control").error(
            f"must be one of {', '.join(CONGESTION_CONTROLS)}, got {describe(cc)}"
        )
    rto = tcp.get("rto_min_ms", 200)
    if isinstance(rto, bool) or not isinstance(rto, (int, float)) or not 1 <= rto <= 2000:
        raise cat.key("rto_min_ms").error(
            f"must be a number of milliseconds in [1, 2000], got {describe(rto)}"
        )

    shaping = _one_of(at, top, "shaping", SHAPINGS, "tbf")
    switching = _one_of(at, top, "switching", SWITCHINGS, "store-and-forward")
    if switching == "cut-through" and shaping != "serialize":
        raise at.key("switching").error(
            "cut-through needs shaping: serialize (a token bucket has no frame times to cut)"
        )

    host_queue = _one_of(at, top, "host_queue", HOST_QUEUES, "fifo")
    if host_queue == "fair" and shaping != "tbf":
        raise at.key("host_queue").error(
            "fair needs shaping: tbf (with serialize, the commodel-serialize daemon sends a host's "
            "frames in the order they came)"
        )

    return ClusterSpec(
        source=source,
        name=name.strip(),
        description=description,
        hosts=hosts,
        nic_rate_bit_s=nic,
        topology=topology,
        host_nic_buffer=buffers["host_nic"],
        switch_port_buffer=buffers["switch_port"],
        backbone_port_buffer=buffers["backbone_port"],
        congestion_control=cc,
        rto_min_ms=float(rto),
        mtu=mtu,
        shaping=shaping,
        switching=switching,
        host_queue=host_queue,
        raw=dict(top),
    )


def load_spec(path: str | Path) -> ClusterSpec:
    """Read and validate a spec file; errors name the file and the field."""
    from ..platform.yaml_limits import read_yaml_file

    source = str(path)
    # the platform files' path: bounded size, nesting and aliases, unique keys, plain tags
    data = read_yaml_file(path, source, ClusterError, "cluster spec")
    return parse_spec(data, source)


def check_cluster_id(ident: str) -> str:
    if not CLUSTER_ID.match(ident):
        raise ClusterError(
            f"cluster name {ident!r}: use 1-16 lower-case letters and digits (no '-', so that "
            "namespace names cm-<name>-<host> can be told apart)"
        )
    return ident
