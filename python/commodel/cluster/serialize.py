"""Per-frame serialization on the shaped ports: the ``commodel-serialize`` daemon and its rules.

With ``shaping: serialize``, every IP packet leaving a shaped port is handed
by netfilter to a queue (``iptables -t mangle -A POSTROUTING ... -j NFQUEUE``): in a host
namespace for its NIC (``-o cm-data``), in the switch namespace for each switch port through
bridge netfilter (``-m physdev --physdev-out PORT``). One ``commodel-serialize`` process (in the
root namespace, one socket per namespace) keeps a virtual FIFO per port: a frame of w wire
bytes (IP packet + 14 MAC header + 4 FCS, at least 64, + 8 preamble + 12 inter-frame gap)
offered at t to a port of rate R leaves at ``max(t, previous departure) + 8 w / R``, and the
packet is let through then (store and forward); a frame that does not fit the port buffer
(bytes held, counted as a qdisc does: IP packet + 14) is dropped. See crates/commodel-serialize.

The daemon is started before the rules (a queue without a listener drops its packets) and
stopped by PID on teardown; its PID is recorded in the cluster's state file.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from . import state
from .util import ClusterError, in_user_namespace, run, tool_path

BINARY = "commodel-serialize"
# SCHED_FIFO priority of the daemon: above the ranks (SCHED_RR 1) and ksoftirqd (FIFO 2
# during mpirun), so that a frame's release is not held up by the traffic it paces.
RT_PRIORITY = 3
READY_TIMEOUT_S = 10.0
BRIDGE_NF = "/proc/sys/net/bridge/bridge-nf-call-iptables"


def binary() -> str:
    """Where the daemon is: $COMMODEL_SERIALIZE, next to this Python (a venv's bin), on PATH, or
    in this source tree's cargo target directory."""
    override = os.environ.get("COMMODEL_SERIALIZE")
    candidates = [override] if override else []
    candidates.append(str(Path(sys.executable).parent / BINARY))
    found = tool_path(BINARY)
    if found:
        candidates.append(found)
    tree = Path(__file__).resolve().parents[3] / "target"
    candidates += [str(tree / "release" / BINARY), str(tree / "debug" / BINARY)]
    for path in candidates:
        if path and os.access(path, os.X_OK) and Path(path).is_file():
            return path
    raise ClusterError(
        f"shaping: serialize needs the {BINARY} daemon, which was not found (looked in "
        f"$COMMODEL_SERIALIZE, {Path(sys.executable).parent}, PATH and target/): build it with "
        f"`make install` or `cargo build --release -p {BINARY}`, or set shaping: tbf in the "
        "spec"
    )


def assign_queues(shapers: list[Any]) -> None:
    """Number the shaped ports' queues per namespace: 0, 1, ... in plan order."""
    count: dict[str, int] = {}
    for s in shapers:
        s.queue = count.get(s.ns, 0)
        count[s.ns] = s.queue + 1


def port_args(shapers: list[Any]) -> list[str]:
    """The daemon's port arguments: NETNS,QUEUE,RATE_BIT_S,BUFFER_BYTES,LABEL."""
    return [f"{s.ns},{s.queue},{s.rate_bit_s},{s.limit},{s.direction}" for s in shapers]


def rules(shapers: list[Any], host_devs: set[str]) -> dict[str, str]:
    """iptables-restore input per namespace: each shaped egress to its queue."""
    by_ns: dict[str, list[str]] = {}
    for s in shapers:
        # a host NIC is an IP output device; a switch port is a bridge port
        match = f"-o {s.dev}" if s.dev in host_devs else f"-m physdev --physdev-out {s.dev}"
        by_ns.setdefault(s.ns, []).append(
            f"-A POSTROUTING {match} -j NFQUEUE --queue-num {s.queue}"
        )
    return {ns: "*mangle\n" + "\n".join(lines) + "\nCOMMIT\n" for ns, lines in by_ns.items()}


def check_prerequisites() -> None:
    """Raise unless the daemon, iptables and bridge netfilter are there (before building)."""
    binary()
    if tool_path("iptables-restore") is None:
        raise ClusterError(
            "shaping: serialize needs iptables (Debian: apt-get install iptables), or set "
            "shaping: tbf in the spec"
        )
    if not Path(BRIDGE_NF).exists():
        raise ClusterError(
            "shaping: serialize needs the kernel's bridge netfilter, to queue the switch "
            f"ports' frames ({BRIDGE_NF} is missing): load it with `modprobe br_netfilter`, "
            "or set shaping: tbf in the spec"
        )


def start(
    cluster_id: str, shapers: list[Any], record: dict[str, Any], cut_through: bool = False
) -> None:
    """Start the daemon for ``shapers`` (switch ports cut through with ``cut_through``), wait
    until it has bound every queue, and record its PID (and write the state file) before
    returning."""
    path = binary()
    directory = state.ensure_state_dir()
    stats = directory / f"{cluster_id}.serialize-stats"
    log = directory / f"{cluster_id}.serialize-log"
    priority = 0 if in_user_namespace() else RT_PRIORITY
    argv = [path, "--rt-priority", str(priority), "--stats", str(stats)]
    argv += ["--cut-through"] * cut_through + port_args(shapers)
    with open(log, "w", encoding="utf-8") as out:
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    record["serialize"] = {"pid": proc.pid, "binary": path, "stats": str(stats), "log": str(log)}
    state.write_state(cluster_id, record)
    deadline = time.monotonic() + READY_TIMEOUT_S
    while True:
        text = log.read_text(encoding="utf-8", errors="replace")
        if text.startswith("ready"):
            return
        code = proc.poll()
        if code is not None or time.monotonic() > deadline:
            why = f"exited with code {code}" if code is not None else "did not get ready"
            detail = text.strip()[-500:] or "no output"
            raise ClusterError(f"{BINARY} {why} (log {log}): {detail}")
        time.sleep(0.01)


def install_rules(shapers: list[Any], host_devs: set[str]) -> None:
    for ns, text in rules(shapers, host_devs).items():
        run(["ip", "netns", "exec", ns, "iptables-restore", "--noflush"], input_text=text,
            what=f"queueing the shaped ports of {ns} to {BINARY}")  # fmt: skip


def _is_ours(pid: int, stats: str, binary: str | None = None) -> bool:
    """True if ``pid`` is still the daemon we started (not a reused PID): its program is
    the one recorded at start (``binary``, which ``$COMMODEL_SERIALIZE`` may have named
    otherwise) or is called commodel-serialize, and it writes this cluster's counters file."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    program = argv[0].decode(errors="replace")
    named = Path(program).name == BINARY or (binary is not None and program == binary)
    return named and stats.encode() in argv


def daemons_of(cluster_id: str) -> list[int]:
    """PIDs of daemons writing ``cluster_id``'s counters, recorded or not (a `cluster up`
    killed between starting one and recording its PID leaves it unrecorded)."""
    stats = str(state.state_dir() / f"{cluster_id}.serialize-stats")
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and _is_ours(int(entry.name), stats):
            pids.append(int(entry.name))
    return pids


def stop_unrecorded(cluster_id: str, grace_s: float = 2.0) -> int:
    """Stop the daemons of :func:`daemons_of`; how many there were."""
    pids = daemons_of(cluster_id)
    stats = str(state.state_dir() / f"{cluster_id}.serialize-stats")
    for pid in pids:
        stop({"serialize": {"pid": pid, "stats": stats}}, grace_s)
    return len(pids)


def stop(record: dict[str, Any] | None, grace_s: float = 2.0) -> bool:
    """Stop the cluster's daemon (SIGTERM, then SIGKILL) by its recorded PID."""
    daemon = (record or {}).get("serialize")
    if not daemon:
        return False
    pid, stats, binary = int(daemon["pid"]), str(daemon["stats"]), daemon.get("binary")
    if not _is_ours(pid, stats, binary):
        return False
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and _is_ours(pid, stats, binary):
        _reap(pid)
        time.sleep(0.02)
    if _is_ours(pid, stats, binary):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)
    _reap(pid)
    return True


def _reap(pid: int) -> None:
    """Collect the daemon's exit status if it is our child (``up`` then ``down`` in one
    process, as ``sandbox`` does), so that it does not linger as a zombie."""
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def read_stats(record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The daemon's counters per port label (frames, bytes, drops, lateness)."""
    daemon = record.get("serialize")
    if not daemon:
        return {}
    try:
        data = json.loads(Path(daemon["stats"]).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
    return {p["label"]: p for p in data.get("ports", [])}
