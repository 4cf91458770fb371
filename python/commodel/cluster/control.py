"""The cluster operations behind ``commodel cluster up|down|status|exec|mpirun``."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from . import fabric, launcher, serialize, settings, state
from .spec import CONGESTION_CONTROLS, ClusterSpec, check_cluster_id, load_spec
from .util import ClusterError, require_root, tool


class Interrupted(ClusterError):
    """``up`` was stopped by a signal; what it built has been removed."""

    exit_code = 130


@contextlib.contextmanager
def signals_raise():
    """Turn SIGTERM/SIGHUP/SIGINT into an exception so that ``finally`` blocks run."""

    def handler(signum: int, _frame: Any) -> None:
        raise Interrupted(f"interrupted by {signal.Signals(signum).name}; cleaned up")

    previous = {}
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        previous[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def up(
    spec_path: str | Path, name: str | None = None, congestion_control: str | None = None
) -> dict[str, Any]:
    """Build the cluster of a spec file; return its state record.

    ``congestion_control`` overrides the spec's ``tcp.congestion_control``. On any failure
    or signal, everything created so far is removed before the error is raised; after a
    SIGKILL, ``down`` finds the leftovers from the state file (written first) and by name
    prefix.
    """
    spec = load_spec(spec_path)
    if congestion_control is not None:
        if congestion_control not in CONGESTION_CONTROLS:
            raise ClusterError(
                f"--congestion-control must be one of {', '.join(CONGESTION_CONTROLS)}, "
                f"got {congestion_control!r}"
            )
        spec = dataclasses.replace(spec, congestion_control=congestion_control)
    require_root("commodel cluster up")
    cluster_id = check_cluster_id(name or spec.default_id())
    if _dead_build(cluster_id):
        print(
            f"commodel cluster: removing what a killed `cluster up` of {cluster_id} left",
            file=sys.stderr,
        )
        with _signals_blocked():
            fabric.teardown(cluster_id)
            with state.locked():
                settings.restore_all()
    if state.read_state(cluster_id) is not None or fabric.our_namespaces(cluster_id):
        raise ClusterError(
            f"cluster {cluster_id} already exists (or is left over from a crash): run "
            f"`commodel cluster down --name {cluster_id}` first, or pick another --name"
        )
    plan = fabric.make_plan(spec, cluster_id)
    record = _record(spec, spec_path, cluster_id, plan)
    started = time.monotonic()
    with signals_raise():
        try:
            state.write_state(cluster_id, record)
            fabric.build(plan, spec, record)
            record["agent"] = str(launcher.write_agent(record))
            record["status"] = "up"
            record["build_seconds"] = round(time.monotonic() - started, 3)
            state.write_state(cluster_id, record)
        except BaseException:
            with _signals_blocked():
                fabric.teardown(cluster_id)
            raise
    return record


def _dead_build(cluster_id: str) -> bool:
    """Whether ``cluster_id`` is the leftover of a `cluster up` killed while building: its
    state says ``building`` and the process that wrote it is gone (or there is no state,
    written before anything is built, but there are namespaces or a daemon of the name).
    A cluster that is up stays: its builder exits once it is built."""
    try:
        record = state.read_state(cluster_id)
    except ClusterError:  # a state file cut short by the kill
        return True
    if record is None:
        return bool(fabric.our_namespaces(cluster_id) or serialize.daemons_of(cluster_id))
    if record.get("status") != "building":
        return False
    pid = int(record.get("pid") or 0)
    return pid <= 0 or not Path(f"/proc/{pid}").exists() or pid == os.getpid()


@contextlib.contextmanager
def _signals_blocked():
    """Ignore further SIGINT/SIGTERM/SIGHUP while cleaning up."""
    previous = {}
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        previous[sig] = signal.signal(sig, signal.SIG_IGN)
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _record(
    spec: ClusterSpec, spec_path: str | Path, cluster_id: str, plan: fabric.Plan
) -> dict[str, Any]:
    topo = spec.topology
    return {
        "id": cluster_id,
        "status": "building",
        "pid": os.getpid(),
        "created_unix": round(time.time(), 3),
        "spec_path": str(Path(spec_path).resolve()),
        "spec_name": spec.name,
        "description": spec.description,
        "topology": topo.kind,
        "racks": [list(r) for r in topo.racks] if topo.kind == "racks" else None,
        "level_rates_bit_s": list(topo.level_rates_bit_s) if topo.kind == "binary-tree" else None,
        "backbone_rate_bit_s": topo.backbone_rate_bit_s if topo.kind == "racks" else None,
        "nic_rate_bit_s": spec.nic_rate_bit_s,
        "buffers": {
            "host_nic": spec.host_nic_buffer,
            "switch_port": spec.switch_port_buffer,
            "backbone_port": spec.backbone_port_buffer,
        },
        "congestion_control": spec.congestion_control,
        "rto_min_ms": spec.rto_min_ms,
        "mtu": spec.mtu,
        "shaping": spec.shaping,
        "switching": spec.switching,
        "host_queue": spec.host_queue,
        **plan.to_json(),
    }


def known_clusters() -> list[str]:
    """Clusters with a state file or with namespaces of ours."""
    return sorted(set(state.listed_clusters()) | set(fabric.cluster_ids_from_namespaces()))


def resolve_name(name: str | None) -> str:
    """The cluster meant: ``name``, or the only one up."""
    if name:
        return check_cluster_id(name)
    clusters = known_clusters()
    if len(clusters) == 1:
        return clusters[0]
    if not clusters:
        raise ClusterError("no emulated cluster is up (start one with `commodel cluster up`)")
    raise ClusterError(f"several clusters are up ({', '.join(clusters)}): choose one with --name")


def load_record(name: str | None) -> dict[str, Any]:
    cluster_id = resolve_name(name)
    record = state.read_state(cluster_id)
    if record is None:
        raise ClusterError(
            f"cluster {cluster_id} has no state file in {state.state_dir()} (left over from a "
            f"crash?): remove it with `commodel cluster down --name {cluster_id}`"
        )
    if record.get("status") != "up":
        raise ClusterError(
            f"cluster {cluster_id} is not up (status {record.get('status')!r}; a crashed `up`?): "
            f"remove it with `commodel cluster down --name {cluster_id}`"
        )
    return record


def down(name: str | None = None, all_clusters: bool = False) -> dict[str, Any]:
    """Remove one cluster (or all of ours) and restore the settings we changed."""
    require_root("commodel cluster down")
    if all_clusters:
        targets = known_clusters()
    elif name:
        targets = [check_cluster_id(name)]
    else:
        clusters = known_clusters()
        if len(clusters) > 1:
            raise ClusterError(
                f"several clusters are up ({', '.join(clusters)}): choose one with --name, "
                "or remove them all with --all"
            )
        targets = clusters
    removed = []
    with _signals_blocked():
        for cluster_id in targets:
            removed.append(fabric.teardown(cluster_id))
        with state.locked():
            restored = settings.restore_all()
    return {"removed": removed, "restored": restored}


def status(name: str | None = None, counters: bool = True) -> dict[str, Any]:
    """The cluster's record with live drop and TCP timeout counters."""
    require_root("commodel cluster status")
    record = load_record(name)
    if counters:
        stats: dict[str, dict[str, Any]] = {}
        for ns in {s["ns"] for s in record["shapers"]}:
            stats[ns] = fabric.qdisc_stats(ns)
        by_port = serialize.read_stats(record)
        for shaper in record["shapers"]:
            if shaper["direction"] in by_port:
                port = by_port[shaper["direction"]]
                shaper["stats"] = {
                    "bytes": port["bytes"],
                    "packets": port["frames"],
                    "drops": port["drops"],
                    "max_held_bytes": port["max_held_bytes"],
                    "chained": port.get("chained", 0),
                    "late_mean_us": port["late_mean_us"],
                    "late_max_us": port["late_max_us"],
                }
            else:
                shaper["stats"] = stats.get(shaper["ns"], {}).get(shaper["dev"], {})
        for host in record["hosts"]:
            host["tcp"] = fabric.tcp_counters(host["ns"])
    return record


def sandbox(
    spec_path: str | Path,
    command: list[str],
    name: str | None = None,
    congestion_control: str | None = None,
) -> int:
    """Bring a cluster up, run ``command`` (in the root or sandbox namespace, with
    ``COMMODEL_CLUSTER`` set), and bring it down whatever happens; return its exit code.

    Not root: the whole thing runs in a private user, network and mount namespace
    (``unshare --user --map-root-user --net --mount``, a tmpfs on /run), where we are root
    for the namespaces we create. Only the congestion controls the real root namespace
    allows can be used there, and ranks cannot get SCHED_RR: timings are noisier. The
    namespaces vanish with the sandbox; nothing is left on the machine.
    """
    if not command:
        raise ClusterError("no command given (write it after `--`)")
    if os.geteuid() != 0:
        return _enter_sandbox(spec_path, command, name, congestion_control)
    record = up(spec_path, name, congestion_control)
    env = dict(os.environ)
    env["COMMODEL_CLUSTER"] = record["id"]
    try:
        return launcher.run_foreground(command, env=env)
    finally:
        with _signals_blocked():
            fabric.teardown(record["id"])
            with state.locked():
                settings.restore_all()


def _enter_sandbox(
    spec_path: str | Path, command: list[str], name: str | None, cc: str | None
) -> int:
    load_spec(spec_path)  # report a bad spec before building anything
    args = [sys.executable, "-m", "commodel.cluster", "sandbox", "--spec", str(spec_path)]
    if name:
        args += ["--name", name]
    if cc:
        args += ["--congestion-control", cc]
    argv = [
        tool("unshare"), "--user", "--map-root-user", "--net", "--mount", "--fork",
        "--kill-child", "/bin/sh", "-ec",
        'mount -t tmpfs -o mode=0755 commodel /run; exec "$@"', "sandbox",
        *args, "--", *command,
    ]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "COMMODEL_STATE_DIR"}
    return launcher.run_foreground(argv, env=env)


def exec_in_host(name: str | None, host: str, command: list[str]) -> int:
    require_root("commodel cluster exec")
    return launcher.exec_in_host(load_record(name), host, command)


def mpirun(name: str | None, command: list[str], **options: Any) -> int:
    require_root("commodel cluster mpirun")
    return launcher.mpirun(load_record(name), command, **options)


# --------------------------------------------------------------------------------------
# Text output


def format_rate(bit_s: float) -> str:
    for unit, scale in (("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)):
        if bit_s >= scale:
            value = bit_s / scale
            return f"{value:.4g} {unit}"
    return f"{bit_s:.0f} bit/s"


def format_status(record: dict[str, Any]) -> str:
    lines = []
    topo = record["topology"]
    if topo == "racks":
        shape = (
            f"racks {len(record['racks'])} x {'/'.join(str(len(r)) for r in record['racks'])} "
            f"hosts, backbone {format_rate(record['backbone_rate_bit_s'])}"
        )
    else:
        rates = ", ".join(
            f"b({h + 1})={format_rate(r)}" for h, r in enumerate(record["level_rates_bit_s"])
        )
        shape = f"binary tree, {rates}"
    lines.append(
        f"cluster {record['id']}: {len(record['hosts'])} hosts, {shape}, "
        f"NIC {format_rate(record['nic_rate_bit_s'])}"
    )
    lines.append(f"  spec {record['spec_path']}")
    buffers = record["buffers"]
    lines.append(
        f"  tcp {record['congestion_control']}, rto_min {record['rto_min_ms']:g} ms "
        f"({record.get('rto_min_by', '?')}), mtu {record['mtu']}; buffers host NIC "
        f"{buffers['host_nic']} B, switch port {buffers['switch_port']} B, backbone port "
        f"{buffers['backbone_port']} B; shaping {record.get('shaping', 'tbf')}"
        + (", switches cut through" if record.get("switching") == "cut-through" else "")
        + (
            ", host NICs serve each destination in turn"
            if record.get("host_queue") == "fair"
            else ""
        )
    )
    lines.append(
        f"  namespaces {record['ctl_ns']} (mpirun), {record['switch_ns']} (switches), "
        f"{record['hosts'][0]['ns']} ..."
    )
    lines.append("")
    lines.append(
        f"  {'host':<8} {'namespace':<22} {'data ip':<15} {'mgmt ip':<15} {'switch':<10} "
        f"{'RTOs':>6} {'retrans':>8}"
    )
    for h in record["hosts"]:
        tcp = h.get("tcp", {})
        lines.append(
            f"  {h['name']:<8} {h['ns']:<22} {h['data_ip']:<15} {h['mgmt_ip']:<15} "
            f"{str(h['switch']).removeprefix('cm-'):<10} "
            f"{tcp.get('TcpExtTCPTimeouts', '-'):>6} {tcp.get('TcpRetransSegs', '-'):>8}"
        )
    lines.append("")
    if record.get("shaping", "tbf") == "serialize":
        lines.append(
            f"  {'egress':<16} {'rate':>12} {'buffer':>8} {'sent bytes':>12} {'drops':>6} "
            f"{'max held':>8} {'chained':>9} {'late mean/max us':>17}"
        )
        for s in record["shapers"]:
            st = s.get("stats", {})
            late = f"{st.get('late_mean_us', '-')}/{st.get('late_max_us', '-')}"
            lines.append(
                f"  {s['direction']:<16} {format_rate(s['rate_bit_s']):>12} {s['limit']:>8} "
                f"{st.get('bytes', '-'):>12} {st.get('drops', '-'):>6} "
                f"{st.get('max_held_bytes', '-'):>8} {st.get('chained', '-'):>9} {late:>17}"
            )
        return "\n".join(lines) + "\n"
    lines.append(
        f"  {'egress':<16} {'configured':>12} {'tbf rate':>12} {'burst':>6} {'limit':>8} "
        f"{'sent bytes':>12} {'drops':>6}"
    )
    for s in record["shapers"]:
        st = s.get("stats", {})
        lines.append(
            f"  {s['direction']:<16} {format_rate(s['nominal_bit_s']):>12} "
            f"{format_rate(s['rate_bit_s']):>12} {s['burst']:>6} {s['limit']:>8} "
            f"{st.get('bytes', '-'):>12} {st.get('drops', '-'):>6}"
        )
    return "\n".join(lines) + "\n"
