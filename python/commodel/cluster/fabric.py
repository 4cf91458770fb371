"""Build and tear down the emulated cluster: namespaces, veth pairs, bridges, tc shapers.

What ``up`` builds for a cluster ``<id>`` (all names start with ``cm-``)::

    cm-<id>-ctl   controller namespace (mpirun runs here): cm-mgmt 198.19.0.1
    cm-<id>-<h>   one namespace per host: cm-data 198.18.x.y (shaped), cm-mgmt 198.19.x.y
    cm-<id>-sw    every switch, as bridges: cm-rack<r> / cm-core (racks) or cm-s<h>x<k>
                  (binary tree), and cm-mgmt, the unshaped management switch

Cables are veth pairs created directly in their two namespaces (nothing is created in the
root namespace). Every data egress is a shaped port with the port buffer of the spec:

* ``shaping: serialize``: every frame takes its serialization time at the nominal
  rate, by the ``commodel-serialize`` daemon (see :mod:`.serialize`), store and forward, tail drop;
* ``shaping: tbf`` (default): ``tbf rate R burst B limit Q`` (Q the buffer). A shaper that can be fed
  at its own rate by an upstream shaper of no greater nominal rate runs 2% faster with a
  ~15 kB bucket, so that it never holds a standing queue (two equal shapers in a row drop
  packets); the host shapers and the real bottlenecks run at the nominal rate with a
  two-frame bucket. An idle tbf port lets its bucket through at once.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import signal
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from . import serialize, settings, state
from .spec import ClusterSpec, RacksTopology, TreeTopology
from .util import PREFIX, ClusterError, run

DATA_NET = ipaddress.ip_network("198.18.0.0/16")
MGMT_NET = ipaddress.ip_network("198.19.0.0/16")
FIRST_HOST_OFFSET = 10
DATA_DEV = "cm-data"
MGMT_DEV = "cm-mgmt"
HEADROOM = 1.02  # a downstream shaper runs this much faster than what feeds it


def namespace_prefix(cluster_id: str) -> str:
    return f"{PREFIX}{cluster_id}-"


def _data_ip(i: int) -> str:
    return str(DATA_NET.network_address + FIRST_HOST_OFFSET + i)


def _mgmt_ip(i: int) -> str:
    return str(MGMT_NET.network_address + FIRST_HOST_OFFSET + i)


@dataclass
class Shaper:
    """One shaped egress: ``tc qdisc replace dev <dev> root tbf ...`` in namespace ``ns``."""

    ns: str
    dev: str
    link: str  # the cable it belongs to, e.g. "h0<->rack0"
    direction: str  # e.g. "h0->rack0"
    nominal_bit_s: int
    rate_bit_s: int = 0
    burst: int = 0
    limit: int = 0
    queue: int = -1  # serialize: the netfilter queue number in ``ns``


@dataclass
class Cable:
    label: str
    kind: str  # "data" or "mgmt"
    a_ns: str
    a_dev: str
    b_ns: str
    b_dev: str
    a_master: str | None = None  # bridge in a_ns the a end joins
    b_master: str | None = None


@dataclass
class Plan:
    cluster_id: str
    switch_ns: str
    ctl_ns: str
    hosts: list[dict[str, Any]]
    bridges: list[str]  # in switch_ns; the first is the management bridge
    cables: list[Cable]
    shapers: list[Shaper]
    # host index pair -> shaper indices along the data path (for the headroom rule)
    paths: list[list[int]] = field(default_factory=list, repr=False)

    @property
    def namespaces(self) -> list[str]:
        return [self.ctl_ns, self.switch_ns] + [h["ns"] for h in self.hosts]

    def to_json(self) -> dict[str, Any]:
        return {
            "cluster_id": self.cluster_id,
            "namespaces": self.namespaces,
            "switch_ns": self.switch_ns,
            "ctl_ns": self.ctl_ns,
            "controller": {"ns": self.ctl_ns, "mgmt_ip": str(MGMT_NET.network_address + 1)},
            "hosts": self.hosts,
            "bridges": self.bridges,
            "cables": [asdict(c) for c in self.cables],
            "shapers": [asdict(s) for s in self.shapers],
            "data_dev": DATA_DEV,
            "mgmt_dev": MGMT_DEV,
            "data_net": str(DATA_NET),
            "mgmt_net": str(MGMT_NET),
        }


class _Builder:
    def __init__(self, spec: ClusterSpec, cluster_id: str) -> None:
        self.spec = spec
        self.id = cluster_id
        self.switch_ns = f"{PREFIX}{cluster_id}-sw"
        self.ctl_ns = f"{PREFIX}{cluster_id}-ctl"
        self.cables: list[Cable] = []
        self.shapers: list[Shaper] = []
        self.bridges: list[str] = [MGMT_DEV]
        self.hosts = [
            {
                "index": i,
                "name": name,
                "ns": f"{PREFIX}{cluster_id}-{name}",
                "data_ip": _data_ip(i),
                "mgmt_ip": _mgmt_ip(i),
                "switch": None,
            }
            for i, name in enumerate(spec.hosts)
        ]
        # host index -> (shaper index of the host egress, shaper index of the port toward it)
        self.host_out: dict[int, int] = {}
        self.host_in: dict[int, int] = {}

    def shaper(self, ns: str, dev: str, link: str, direction: str, rate: int, limit: int) -> int:
        self.shapers.append(Shaper(ns, dev, link, direction, rate, limit=limit))
        return len(self.shapers) - 1

    def attach_host(self, i: int, bridge: str) -> None:
        host = self.hosts[i]
        host["switch"] = bridge
        name = host["name"]
        label = f"{name}<->{bridge.removeprefix(PREFIX)}"
        port = f"{PREFIX}p{i}d"
        self.cables.append(
            Cable(label, "data", host["ns"], DATA_DEV, self.switch_ns, port, b_master=bridge)
        )
        sw = bridge.removeprefix(PREFIX)
        self.host_out[i] = self.shaper(
            host["ns"],
            DATA_DEV,
            label,
            f"{name}->{sw}",
            self.spec.nic_rate_bit_s,
            self.spec.host_nic_buffer,
        )
        self.host_in[i] = self.shaper(
            self.switch_ns,
            port,
            label,
            f"{sw}->{name}",
            self.spec.nic_rate_bit_s,
            self.spec.switch_port_buffer,
        )
        self.cables.append(
            Cable(
                f"{name}<->mgmt",
                "mgmt",
                host["ns"],
                MGMT_DEV,
                self.switch_ns,
                f"{PREFIX}p{i}m",
                b_master=MGMT_DEV,
            )
        )

    def trunk(
        self, lower: str, upper: str, up_dev: str, down_dev: str, rate: int
    ) -> tuple[int, int]:
        """A shaped inter-switch cable; returns (upward shaper, downward shaper)."""
        lo, hi = lower.removeprefix(PREFIX), upper.removeprefix(PREFIX)
        label = f"{lo}<->{hi}"
        self.cables.append(
            Cable(label, "data", self.switch_ns, up_dev, self.switch_ns, down_dev, lower, upper)
        )
        buf = self.spec.backbone_port_buffer
        up = self.shaper(self.switch_ns, up_dev, label, f"{lo}->{hi}", rate, buf)
        down = self.shaper(self.switch_ns, down_dev, label, f"{hi}->{lo}", rate, buf)
        return up, down

    def racks(self, topo: RacksTopology) -> list[list[int]]:
        rack_of: dict[int, int] = {}
        uplinks: list[tuple[int, int]] = []
        many = len(topo.racks) > 1
        if many:
            self.bridges.append(f"{PREFIX}core")
        for r, members in enumerate(topo.racks):
            bridge = f"{PREFIX}rack{r}"
            self.bridges.append(bridge)
            for i in members:
                rack_of[i] = r
                self.attach_host(i, bridge)
            if many:
                uplinks.append(
                    self.trunk(
                        bridge,
                        f"{PREFIX}core",
                        f"{PREFIX}r{r}u",
                        f"{PREFIX}r{r}c",
                        topo.backbone_rate_bit_s,
                    )
                )
        paths = []
        n = len(self.hosts)
        for i in range(n):
            for j in range(n):
                if i == j:
                    continue
                if rack_of[i] == rack_of[j]:
                    paths.append([self.host_out[i], self.host_in[j]])
                else:
                    paths.append(
                        [
                            self.host_out[i],
                            uplinks[rack_of[i]][0],
                            uplinks[rack_of[j]][1],
                            self.host_in[j],
                        ]
                    )
        for i, r in rack_of.items():
            self.hosts[i]["rack"] = r
        return paths

    def tree(self, topo: TreeTopology) -> list[list[int]]:
        depth = topo.depth
        n = len(self.hosts)

        def bridge(h: int, k: int) -> str:
            return f"{PREFIX}s{h}x{k}"

        for h in range(depth, 0, -1):
            for k in range(n >> h):
                self.bridges.append(bridge(h, k))
        for i in range(n):
            self.attach_host(i, bridge(1, i >> 1))
        # edge[(h, k)]: the height-h edge above switch (h-1, k), h = 2..depth
        edge: dict[tuple[int, int], tuple[int, int]] = {}
        for h in range(2, depth + 1):
            for k in range(n >> (h - 1)):
                edge[(h, k)] = self.trunk(
                    bridge(h - 1, k),
                    bridge(h, k >> 1),
                    f"{PREFIX}e{h}x{k}u",
                    f"{PREFIX}e{h}x{k}d",
                    topo.level_rates_bit_s[h - 1],
                )
        paths = []
        for i in range(n):
            for j in range(n):
                if i == j:
                    continue
                top = (i ^ j).bit_length()  # height of the lowest common switch
                path = [self.host_out[i]]
                path += [edge[(h, i >> (h - 1))][0] for h in range(2, top + 1)]
                path += [edge[(h, j >> (h - 1))][1] for h in range(top, 1, -1)]
                path.append(self.host_in[j])
                paths.append(path)
        return paths


def assign_rates(shapers: list[Shaper], paths: list[list[int]], mtu: int) -> None:
    """Set each shaper's actual rate and bucket from the nominal rates and the data paths.

    A shaper q runs at ``HEADROOM`` times the fastest shaper p upstream of it on some path
    whose nominal rate is <= q's: such a p can feed q at p's full rate without q being the
    intended bottleneck. Others run at the nominal rate.
    """
    rate = [s.nominal_bit_s for s in shapers]
    changed = True
    while changed:
        changed = False
        for path in paths:
            for a in range(len(path)):
                p = path[a]
                for q in path[a + 1 :]:
                    if shapers[p].nominal_bit_s <= shapers[q].nominal_bit_s:
                        want = int(round(rate[p] * HEADROOM))
                        if want > rate[q]:
                            rate[q] = want
                            changed = True
    frame = mtu + 50
    for s, r in zip(shapers, rate):
        s.rate_bit_s = r
        if r > s.nominal_bit_s:
            s.burst = int(max(15000, 2 * frame, r / 8 * 1.2e-3))
        else:
            s.burst = int(max(2 * frame, r / 8 * 250e-6))
        s.limit = max(s.limit, s.burst, frame)


def make_plan(spec: ClusterSpec, cluster_id: str) -> Plan:
    builder = _Builder(spec, cluster_id)
    if isinstance(spec.topology, RacksTopology):
        paths = builder.racks(spec.topology)
    else:
        paths = builder.tree(spec.topology)
    builder.cables.append(
        Cable(
            "ctl<->mgmt",
            "mgmt",
            builder.ctl_ns,
            MGMT_DEV,
            builder.switch_ns,
            f"{PREFIX}ctlm",
            b_master=MGMT_DEV,
        )
    )
    if spec.shaping == "tbf":
        assign_rates(builder.shapers, paths, spec.mtu)
    else:
        for shaper in builder.shapers:
            shaper.rate_bit_s = shaper.nominal_bit_s
        serialize.assign_queues(builder.shapers)
    return Plan(
        cluster_id=cluster_id,
        switch_ns=builder.switch_ns,
        ctl_ns=builder.ctl_ns,
        hosts=builder.hosts,
        bridges=builder.bridges,
        cables=builder.cables,
        shapers=builder.shapers,
        paths=paths,
    )


# --------------------------------------------------------------------------------------
# Building


def _ip_batch(ns: str | None, lines: list[str], what: str) -> None:
    if not lines:
        return
    argv = ["ip"] + (["-n", ns] if ns else []) + ["-batch", "-"]
    run(argv, input_text="\n".join(lines) + "\n", what=what)


def _tc_batch(ns: str, lines: list[str], what: str) -> None:
    if lines:
        run(["tc", "-n", ns, "-batch", "-"], input_text="\n".join(lines) + "\n", what=what)


def _ns_shell(ns: str, script: str, what: str) -> None:
    run(["ip", "netns", "exec", ns, "/bin/sh", "-ec", script], what=what)


def _sysctl_lines(values: dict[str, str], if_present: bool = False) -> list[str]:
    """Shell lines setting sysctls; with ``if_present``, skip those the kernel lacks."""
    lines = []
    for name, value in values.items():
        path = "/proc/sys/" + name.replace(".", "/")
        guard = f"[ ! -e {path} ] || " if if_present else ""
        lines.append(f"{guard}echo '{value}' > {path}")
    return lines


def _stall_point(step: str) -> None:
    """Test hook: with COMMODEL_CLUSTER_STALL=<step>, ``up`` stops at that step and waits
    (until killed), so a test can kill the harness midway and check that ``down`` cleans."""
    if os.environ.get("COMMODEL_CLUSTER_STALL") == step:
        print(f"commodel cluster: stalled at step {step!r} (COMMODEL_CLUSTER_STALL)", flush=True)
        while True:
            time.sleep(3600)


def build(plan: Plan, spec: ClusterSpec, record: dict[str, Any]) -> None:
    """Create everything in ``plan``. The caller tears down on any exception."""
    mtu = spec.mtu
    if spec.shaping == "serialize":
        serialize.check_prerequisites()
    # 1. namespaces
    _ip_batch(None, [f"netns add {ns}" for ns in plan.namespaces], "creating namespaces")
    _stall_point("namespaces")

    # 2. bridges and cables (veth pairs created straight into their two namespaces)
    sw = plan.switch_ns
    lines = [
        f"link add {b} mtu {mtu} type bridge stp_state 0 forward_delay 0 mcast_snooping 0"
        for b in plan.bridges
    ]
    for c in plan.cables:
        cable_mtu = mtu if c.kind == "data" else 1500
        if c.a_ns == c.b_ns == sw:
            lines.append(
                f"link add {c.a_dev} mtu {cable_mtu} type veth peer name {c.b_dev} mtu {cable_mtu}"
            )
        else:
            # created in b's namespace (the switch), peer moved straight into a's
            assert c.b_ns == sw
            lines.append(
                f"link add {c.b_dev} mtu {cable_mtu} type veth peer name {c.a_dev} "
                f"mtu {cable_mtu} netns {c.a_ns}"
            )
        for ns, dev, master in ((c.a_ns, c.a_dev, c.a_master), (c.b_ns, c.b_dev, c.b_master)):
            if master and ns == sw:
                lines.append(f"link set {dev} master {master}")
    _ip_batch(sw, lines, "creating bridges and veth pairs")
    _stall_point("links")

    # 3. sysctls and offloads inside every namespace (the congestion control needs the
    #    root namespace to allow it while the host namespaces pick it)
    # IPv6 off (if the kernel has it); bridge netfilter off in the switch namespace, except
    # for IPv4 with shaping: serialize (the switch ports are queued from iptables)
    optional = {"net.ipv6.conf.all.disable_ipv6": "1", "net.ipv6.conf.default.disable_ipv6": "1"}
    bridge_nf = {
        f"net.bridge.bridge-nf-call-{table}": "0"
        for table in ("iptables", "ip6tables", "arptables")
    }
    queue_bridged = {}
    if spec.shaping == "serialize":
        del bridge_nf["net.bridge.bridge-nf-call-iptables"]
        queue_bridged["net.bridge.bridge-nf-call-iptables"] = "1"
    data_devs: dict[str, list[str]] = {}
    for c in plan.cables:
        if c.kind == "data":
            data_devs.setdefault(c.a_ns, []).append(c.a_dev)
            data_devs.setdefault(c.b_ns, []).append(c.b_dev)
    rto_us = int(round(spec.rto_min_ms * 1000))
    rto_by_sysctl = True
    with state.locked(), settings.congestion_control_allowed(spec.congestion_control):
        for ns in plan.namespaces:
            values: dict[str, str] = {}
            script = _sysctl_lines({**optional, **(bridge_nf if ns == sw else {})}, True)
            if ns == sw:
                script += _sysctl_lines(queue_bridged)
            if ns not in (sw, plan.ctl_ns):
                values["net.ipv4.tcp_congestion_control"] = spec.congestion_control
                values["net.ipv4.tcp_no_metrics_save"] = "1"
                rto_by_sysctl = os.path.exists("/proc/sys/net/ipv4/tcp_rto_min_us")
                if rto_by_sysctl:
                    values["net.ipv4.tcp_rto_min_us"] = str(rto_us)
            script += _sysctl_lines(values)
            script += [f"ethtool -K {dev} tso off gso off gro off" for dev in data_devs.get(ns, [])]
            _ns_shell(ns, "\n".join(script), f"configuring namespace {ns}")
        _stall_point("congestion")  # root namespace's allowed list changed, not yet restored
    record["rto_min_by"] = "sysctl tcp_rto_min_us" if rto_by_sysctl else "route rto_min"
    _stall_point("sysctls")

    # 4. addresses, links up, routes
    per_ns: dict[str, list[str]] = {ns: ["link set lo up"] for ns in plan.namespaces}
    per_ns[sw] += [f"link set {b} up" for b in plan.bridges]
    for c in plan.cables:
        per_ns[c.a_ns].append(f"link set {c.a_dev} up")
        per_ns[c.b_ns].append(f"link set {c.b_dev} up")
    per_ns[plan.ctl_ns].insert(
        0, f"addr add {MGMT_NET.network_address + 1}/{MGMT_NET.prefixlen} dev {MGMT_DEV}"
    )
    for h in plan.hosts:
        per_ns[h["ns"]][:0] = [
            f"addr add {h['data_ip']}/{DATA_NET.prefixlen} dev {DATA_DEV}",
            f"addr add {h['mgmt_ip']}/{MGMT_NET.prefixlen} dev {MGMT_DEV}",
        ]
        if not rto_by_sysctl:
            per_ns[h["ns"]].append(
                f"route replace {DATA_NET} dev {DATA_DEV} proto kernel scope link "
                f"src {h['data_ip']} rto_min {rto_us // 1000}ms"
            )
    for ns, lines in per_ns.items():
        _ip_batch(ns, lines, f"addressing namespace {ns}")

    # 5. shapers
    if spec.shaping == "serialize":
        serialize.start(plan.cluster_id, plan.shapers, record, spec.switching == "cut-through")
        serialize.install_rules(plan.shapers, {DATA_DEV})
        _stall_point("shapers")
        return
    by_ns: dict[str, list[str]] = {}
    for s in plan.shapers:
        by_ns.setdefault(s.ns, []).append(
            f"qdisc replace dev {s.dev} root handle 1: tbf rate {s.rate_bit_s}bit "
            f"burst {s.burst} limit {s.limit}"
        )
    if spec.host_queue == "fair":
        for h in plan.hosts:
            by_ns[h["ns"]] += fair_host_queue(plan, h["index"], spec.host_nic_buffer)
    for ns, lines in by_ns.items():
        _tc_batch(ns, lines, f"shaping in namespace {ns}")
    _stall_point("shapers")


def fair_host_queue(plan: Plan, i: int, limit: int) -> list[str]:
    """tc lines that put, under host ``i``'s NIC shaper (``1:``, a tbf), one queue per other
    host, served in turn a frame at a time (htb with a 1514-byte quantum, its rates far above
    the line rate, so that it only schedules; this kernel may have neither fq_codel nor sfq),
    each holding ``limit`` bytes, as the fq_codel of a Debian host's NIC serves its flows
    (Open MPI opens one TCP connection per peer). Frames to no host (ARP) take class 10:1."""
    fast = 10 * max(sh.rate_bit_s for sh in plan.shapers)
    cls = f"htb rate {fast}bit ceil {fast}bit burst 15k cburst 15k quantum 1514"
    lines = [
        f"qdisc add dev {DATA_DEV} parent 1:1 handle 10: htb default 1",
        f"class add dev {DATA_DEV} parent 10: classid 10:ffff {cls}",
        f"class add dev {DATA_DEV} parent 10:ffff classid 10:1 {cls}",
    ]
    for other in plan.hosts:
        if other["index"] == i:
            continue
        minor = f"{other['index'] + 2:x}"
        lines += [
            f"class add dev {DATA_DEV} parent 10:ffff classid 10:{minor} {cls}",
            f"qdisc add dev {DATA_DEV} parent 10:{minor} bfifo limit {limit}",
            f"filter add dev {DATA_DEV} parent 10: protocol ip prio 1 u32 "
            f"match ip dst {other['data_ip']}/32 flowid 10:{minor}",
        ]
    return lines


# --------------------------------------------------------------------------------------
# Tearing down


def our_namespaces(cluster_id: str | None = None) -> list[str]:
    """Namespaces that exist and carry our prefix (of one cluster, or of all)."""
    proc = run(["ip", "netns", "list"], check=False)
    prefix = namespace_prefix(cluster_id) if cluster_id else PREFIX
    names = []
    for line in proc.stdout.splitlines():
        parts = line.split()
        if parts and parts[0].startswith(prefix):
            names.append(parts[0])
    return names


def cluster_ids_from_namespaces() -> list[str]:
    ids = set()
    for ns in our_namespaces():
        rest = ns[len(PREFIX) :]
        if "-" in rest:
            ids.add(rest.split("-", 1)[0])
    return sorted(ids)


def namespace_pids(ns: str) -> list[int]:
    proc = run(["ip", "netns", "pids", ns], check=False)
    return [int(tok) for tok in proc.stdout.split() if tok.isdigit()]


def _kill_pids(pids: list[int], sig: int) -> None:
    for pid in pids:
        if pid == os.getpid():
            continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def stop_processes(namespaces: list[str], grace_s: float = 2.0) -> int:
    """SIGTERM every process inside our namespaces (found with ``ip netns pids``), then
    SIGKILL what is left after ``grace_s``. Returns how many processes were found."""
    found = {ns: namespace_pids(ns) for ns in namespaces}
    total = sum(len(p) for p in found.values())
    if not total:
        return 0
    for pids in found.values():
        _kill_pids(pids, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if not any(namespace_pids(ns) for ns in namespaces):
            return total
        time.sleep(0.05)
    for ns in namespaces:
        _kill_pids(namespace_pids(ns), signal.SIGKILL)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and any(namespace_pids(ns) for ns in namespaces):
        time.sleep(0.05)
    return total


def teardown(cluster_id: str) -> dict[str, Any]:
    """Remove one cluster: processes, namespaces (with their links), state; restore settings."""
    record = None
    with contextlib.suppress(ClusterError):
        record = state.read_state(cluster_id)
    namespaces = set(our_namespaces(cluster_id))
    if record:
        listed = set(record.get("namespaces", []))
        existing = set(our_namespaces())
        namespaces |= listed & existing
    namespaces_list = sorted(namespaces)
    serialize.stop(record)
    serialize.stop_unrecorded(cluster_id)  # started by an `up` killed before it recorded the PID
    killed = stop_processes(namespaces_list)
    if namespaces_list:
        proc = run(
            ["ip", "-force", "-batch", "-"],
            input_text="".join(f"netns del {ns}\n" for ns in namespaces_list),
            check=False,
        )
        left = set(our_namespaces(cluster_id)) & namespaces
        if left:
            raise ClusterError(
                f"could not delete namespaces {', '.join(sorted(left))}: {proc.stderr.strip()}"
            )
    state.remove_state(cluster_id)
    return {"cluster": cluster_id, "namespaces": namespaces_list, "processes": killed}


# --------------------------------------------------------------------------------------
# Status


def qdisc_stats(ns: str) -> dict[str, dict[str, Any]]:
    """``tc -s qdisc`` of a namespace, by device: sent bytes/packets, drops, overlimits."""
    proc = run(["tc", "-n", ns, "-s", "-j", "qdisc", "show"], check=False)
    out: dict[str, dict[str, Any]] = {}
    if proc.returncode != 0 or not proc.stdout.strip():
        return out
    try:
        entries = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return out
    for entry in entries:
        if entry.get("kind") != "tbf":
            continue
        out[entry.get("dev", "?")] = {
            "bytes": entry.get("bytes", 0),
            "packets": entry.get("packets", 0),
            "drops": entry.get("drops", 0),
            "overlimits": entry.get("overlimits", 0),
            "backlog": entry.get("backlog", 0),
        }
    return out


TCP_COUNTERS = ("TcpExtTCPTimeouts", "TcpRetransSegs", "TcpOutSegs")


def tcp_counters(ns: str) -> dict[str, int]:
    """TCP retransmission-timeout and retransmission counters of a namespace (``nstat``)."""
    proc = run(["ip", "netns", "exec", ns, "nstat", "-asz", *TCP_COUNTERS], check=False)
    counters = {name: 0 for name in TCP_COUNTERS}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] in counters and parts[1].isdigit():
            counters[parts[0]] = int(parts[1])
    return counters
