"""Running programs inside the emulated hosts: ``cluster exec`` and ``cluster mpirun``.

``mpirun`` runs in the controller namespace. Open MPI starts its daemons with a launcher
agent of ours instead of ssh: the agent skips ssh options, takes the host name, and runs the
daemon's command in that host's namespace with its own UTS namespace (so ``hostname`` is
the emulated host's name)::

    ip netns exec cm-<id>-<host> unshare --uts [chrt -r 1] sh -c 'hostname <host>; exec sh -c CMD'

Daemons talk to mpirun over the unshaped management network (``oob_tcp_if_include
cm-mgmt``); ranks talk over the shaped data network (``btl tcp`` on ``cm-data``). Ranks run
under SCHED_RR priority 1 with ``mpi_yield_when_idle 1`` and, for the run, the ksoftirqd
threads under SCHED_FIFO 2 (restored afterwards), which keeps the 2-core noise low.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..children import die_with_parent
from . import settings, state
from .util import ClusterError, in_user_namespace, tool

AGENT_TEMPLATE = """#!/bin/sh
# Launcher agent of the commodel emulated cluster {cluster_id!s} (stands in for ssh).
# Written by `commodel cluster up`; removed by `commodel cluster down`.
# usage: {agent_name} [ssh options] HOST COMMAND...
while [ $# -gt 0 ]; do
  case "$1" in
    -[bcDEeFIiJLlmOopQRSWw]) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
if [ $# -lt 2 ]; then
  echo "commodel cluster agent: usage: $0 [ssh options] HOST COMMAND..." >&2
  exit 255
fi
host=$1
shift
case "$host" in
{cases}
  *) echo "commodel cluster agent: unknown host '$host' in cluster {cluster_id!s}" >&2; exit 255 ;;
esac
if [ "${{COMMODEL_CLUSTER_RT:-1}}" = 1 ]; then
  exec {ip} netns exec "$ns" {unshare} --uts {chrt} -r 1 /bin/sh -c 'hostname "$0" && exec /bin/sh -c "$1"' "$host" "$*"
else
  exec {ip} netns exec "$ns" {unshare} --uts /bin/sh -c 'hostname "$0" && exec /bin/sh -c "$1"' "$host" "$*"
fi
"""


def write_agent(record: dict[str, Any]) -> Path:
    """Write the cluster's launcher agent into the state directory; return its path."""
    cluster_id = record["id"]
    path = state.agent_path(cluster_id)
    cases = "\n".join(f"  {h['name']}) ns={h['ns']} ;;" for h in record["hosts"])
    text = AGENT_TEMPLATE.format(
        cluster_id=cluster_id,
        agent_name=path.name,
        cases=cases,
        ip=tool("ip"),
        unshare=tool("unshare"),
        chrt=tool("chrt"),
    )
    state.ensure_state_dir()
    path.write_text(text, encoding="utf-8")
    path.chmod(0o755)
    return path


def host_record(record: dict[str, Any], host: str) -> dict[str, Any]:
    for h in record["hosts"]:
        if h["name"] == host:
            return h
    names = [h["name"] for h in record["hosts"]]
    shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
    raise ClusterError(f"cluster {record['id']} has no host {host!r} (hosts: {shown})")


def exec_argv(record: dict[str, Any], host: str, command: Sequence[str]) -> list[str]:
    """The argv that runs ``command`` inside ``host`` with its host name set."""
    if not command:
        raise ClusterError("no command given (write it after `--`)")
    h = host_record(record, host)
    return [
        tool("ip"), "netns", "exec", h["ns"], tool("unshare"), "--uts", "/bin/sh", "-c",
        'hostname "$0" && exec "$@"', h["name"], *command,
    ]  # fmt: skip


def _forwarding_signals(proc: subprocess.Popen[Any]) -> Any:
    """Forward SIGINT/SIGTERM/SIGHUP to our child ``proc`` (by its PID) while it runs."""
    previous = {}

    def forward(signum: int, _frame: Any) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signum)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        previous[sig] = signal.signal(sig, forward)
    return previous


def _restore_signals(previous: dict[int, Any]) -> None:
    for sig, handler in previous.items():
        signal.signal(sig, handler)


def run_foreground(argv: Sequence[str], env: dict[str, str] | None = None) -> int:
    """Run ``argv`` with our stdio, forwarding termination signals; return its exit code."""
    try:
        # mpirun (and so the ranks) end with us, even when we are killed with SIGKILL
        proc = subprocess.Popen(list(argv), env=env, preexec_fn=die_with_parent)
    except OSError as exc:
        raise ClusterError(f"cannot run {argv[0]}: {exc.strerror}") from None
    previous = _forwarding_signals(proc)
    try:
        return proc.wait()
    finally:
        _restore_signals(previous)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def exec_in_host(record: dict[str, Any], host: str, command: Sequence[str]) -> int:
    return run_foreground(exec_argv(record, host, command))


def mpi_flavour(mpirun: str) -> tuple[str, int]:
    """("openmpi", major) for Open MPI's mpirun, ("mpich", major) for MPICH's hydra
    mpiexec, ("intel", year) for Intel MPI's mpiexec.hydra; other MPIs are refused."""
    try:
        proc = subprocess.run(
            [mpirun, "--version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ClusterError(f"cannot run {mpirun} --version: {exc}") from None
    text = proc.stdout + proc.stderr
    match = re.search(r"Open MPI\)?\s+(\d+)\.", text)
    if match:
        return "openmpi", int(match.group(1))
    hydra = re.search(r"HYDRA build details:\s+Version:\s+(\d+)\.", text)
    if hydra:
        return "mpich", int(hydra.group(1))
    intel = re.search(r"Intel\(R\) MPI Library .*Version (\d+)", text)
    if intel:
        return "intel", int(intel.group(1))
    first = text.strip().splitlines()[:1]
    raise ClusterError(
        f"{mpirun} is neither Open MPI's mpirun nor MPICH's mpiexec "
        f"({first[0] if first else 'no version output'}); the emulated cluster launches "
        "Open MPI 4 or 5, MPICH and Intel MPI"
    )


def hydra_argv(
    record: dict[str, Any],
    mpiexec: str,
    hostfile: Path,
    ranks: int,
    user_args: Sequence[str],
    command: Sequence[str],
    flavour: str = "mpich",
    ranks_per_host: int = 1,
) -> list[str]:
    """A hydra mpiexec (MPICH's, or Intel MPI's, which grew from it) over the cluster: its
    proxies started by our agent (hydra's ssh launcher calls ``AGENT -x HOST CMD``),
    mpiexec reached over the management network (``-iface``); the ranks on libfabric's tcp
    provider over the data NICs (``FI_PROVIDER=tcp``, ``FI_TCP_IFACE``) with no shared
    memory between them. A user's ``-genv NAME VALUE`` of the same names wins.

    MPICH: the ofi netmod (``MPIR_CVAR_CH4_NETMOD=ofi``), ``MPIR_CVAR_NOLOCAL=1``, and a
    rank whose progress engine finds nothing to do sleeps a microsecond now and then
    (``MPIR_CVAR_CH4_PROGRESS_THROTTLE=1``, as Open MPI's ranks yield with
    ``mpi_yield_when_idle``): the emulated hosts share the machine's cores, and MPICH's
    ranks polling at full speed made the flows of calibrate's topology rounds take
    0.1-592 ms for 21 ms of wire time on two-rack-8 (11-46 ms throttled; the fit saw one
    switch, then the racks).

    Intel MPI: ``I_MPI_FABRICS=ofi`` (libfabric for every peer, no shared memory), no
    pinning (``I_MPI_PIN=0``: each emulated host would pin its one rank to core 0, the same
    core for all), ``-ppn`` ranks per host (Intel's hydra fills a host's cores otherwise,
    whatever the host file says), and its ranks wait in the kernel instead of polling the
    machine's shared cores (:data:`INTEL_IDLE`)."""
    agent = str(state.agent_path(record["id"]))
    given = {user_args[i + 1] for i, a in enumerate(user_args[:-1]) if a == "-genv"}
    if flavour == "intel":
        env = [
            ("I_MPI_FABRICS", "ofi"),
            ("FI_PROVIDER", "tcp"),
            ("FI_TCP_IFACE", record["data_dev"]),
            ("I_MPI_PIN", "0"),
            *INTEL_IDLE,
        ]
    else:
        env = [
            ("MPIR_CVAR_CH4_NETMOD", "ofi"),
            ("FI_PROVIDER", "tcp"),
            ("FI_TCP_IFACE", record["data_dev"]),
            ("MPIR_CVAR_NOLOCAL", "1"),
            ("MPIR_CVAR_CH4_PROGRESS_THROTTLE", "1"),
        ]
    argv = [tool("ip"), "netns", "exec", record["ctl_ns"], mpiexec]
    argv += ["-launcher", "ssh", "-launcher-exec", agent, "-iface", record["mgmt_dev"]]
    argv += ["-f", str(hostfile)]
    for key, value in env:
        if key not in given:
            argv += ["-genv", key, value]
    if flavour == "intel" and not _has_option(user_args, "-ppn", "-perhost"):
        argv += ["-ppn", str(ranks_per_host)]
    if not _has_option(user_args, "-np", "-n"):
        argv += ["-n", str(ranks)]
    return argv + list(user_args) + list(command)


# How Intel MPI's ranks wait: in the kernel (I_MPI_WAIT_MODE=1), not polling. 4 ranks on 4
# emulated hosts, allreduce medians over 200, 30 and 6 calls of 1 KiB, 64 KiB and 1 MiB,
# two mpiruns each: polling 200 ms / 226-299 ms / 566-635 ms (1 KiB took an RTO's 200 ms,
# each rank used 28-31 s of CPU), I_MPI_THREAD_YIELD=2 0.8 / 10-11 / 272-307 ms,
# I_MPI_WAIT_MODE=1 0.18 / 8.5 / 202-273 ms (1-3 s of CPU a rank).
INTEL_IDLE: tuple[tuple[str, str], ...] = (("I_MPI_WAIT_MODE", "1"),)


def _user_mca_keys(args: Sequence[str]) -> set[str]:
    keys = set()
    for i, arg in enumerate(args):
        if arg in ("--mca", "-mca", "--prtemca", "-prtemca", "--gmca") and i + 1 < len(args):
            keys.add(args[i + 1])
    return keys


def _has_option(args: Sequence[str], *names: str) -> bool:
    return any(a in names or any(a.startswith(n + "=") for n in names) for a in args)


def mpirun_argv(
    record: dict[str, Any],
    mpirun: str,
    major: int,
    hostfile: Path,
    ranks: int,
    ranks_per_host: int,
    user_args: Sequence[str],
    command: Sequence[str],
) -> list[str]:
    """The full argv (run in the controller namespace) of one ``cluster mpirun``."""
    agent = str(state.agent_path(record["id"]))
    data_dev, mgmt_dev = record["data_dev"], record["mgmt_dev"]
    taken = _user_mca_keys(user_args)
    btl = "self,vader,tcp" if ranks_per_host > 1 else "self,tcp"
    if major >= 5:
        btl = btl.replace("vader", "sm")
        launcher = [
            ("--prtemca", "plm_ssh_agent", agent),
            ("--prtemca", "plm_ssh_no_tree_spawn", "1"),
            ("--prtemca", "oob_tcp_if_include", mgmt_dev),
        ]
    else:
        launcher = [
            ("--mca", "plm_rsh_agent", agent),
            ("--mca", "plm_rsh_no_tree_spawn", "1"),
            ("--mca", "oob_tcp_if_include", mgmt_dev),
        ]
    transport = [
        ("--mca", "pml", "ob1"),
        ("--mca", "btl", btl),
        ("--mca", "btl_tcp_if_include", data_dev),
        ("--mca", "mpi_yield_when_idle", "1"),
    ]
    argv = [tool("ip"), "netns", "exec", record["ctl_ns"], mpirun]
    for flag, key, value in launcher + transport:
        if key not in taken:
            argv += [flag, key, value]
    # the ranks find programs where the user does: Open MPI's rsh launch puts its own
    # prefix (/usr/bin) first in the ranks' PATH, so `python3` there would be the system's,
    # not the virtual environment's the user runs commodel from
    if not any(a == "PATH" or a.startswith("PATH=") for a in user_args):
        argv += ["-x", "PATH"]
    if not _has_option(user_args, "--bind-to"):
        argv += ["--bind-to", "none"]
    if not _has_option(user_args, "--map-by", "--rank-by", "-npernode", "--npernode", "-N"):
        argv += ["--map-by", "slot"]
    argv += ["--hostfile", str(hostfile)]
    if not _has_option(user_args, "-np", "-n", "--np", "-c"):
        argv += ["-np", str(ranks)]
    if os.geteuid() == 0 and not _has_option(user_args, "--allow-run-as-root"):
        argv.append("--allow-run-as-root")
    return argv + list(user_args) + list(command)


def mpirun(
    record: dict[str, Any],
    command: Sequence[str],
    user_args: Sequence[str] = (),
    ranks_per_host: int = 1,
    hosts: int | None = None,
    realtime: bool = True,
    mpirun_path: str | None = None,
    dry_run: bool = False,
) -> int:
    """Launch ``command`` as an MPI job over the cluster; return mpirun's exit code.

    Ranks are placed in blocks: rank r runs on host ``r // ranks_per_host`` (``--map-by
    slot`` over a hostfile of ``<host> slots=<ranks_per_host>`` lines), on the first
    ``hosts`` hosts (default all). The ranks find ``COMMODEL_CLUSTER`` (the cluster name),
    ``COMMODEL_CLUSTER_SPEC`` (its spec file) and ``COMMODEL_RANKS_PER_HOST`` in their
    environment.
    """
    if not command:
        raise ClusterError("no command given (write it after `--`)")
    if realtime and in_user_namespace():
        print(
            "commodel cluster mpirun: in a user namespace (the sandbox) ranks cannot get "
            "SCHED_RR: running without it (timings are noisier)",
            file=sys.stderr,
        )
        realtime = False
    if ranks_per_host < 1:
        raise ClusterError(f"--ranks-per-host must be >= 1, got {ranks_per_host}")
    all_hosts = record["hosts"]
    count = len(all_hosts) if hosts is None else hosts
    if not 1 <= count <= len(all_hosts):
        raise ClusterError(f"--hosts must be in [1, {len(all_hosts)}], got {count}")
    mpirun_path = mpirun_path or os.environ.get("COMMODEL_MPIRUN") or "mpirun"
    resolved = tool(mpirun_path) if os.sep not in mpirun_path else mpirun_path
    flavour, major = mpi_flavour(resolved)
    if not state.agent_path(record["id"]).exists():
        write_agent(record)

    state.ensure_state_dir()
    for stale in state.state_dir().glob(f"{record['id']}.run-*"):  # of runs killed with SIGKILL
        pid = stale.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(stale, ignore_errors=True)
    run_dir = state.state_dir() / f"{record['id']}.run-{os.getpid()}"
    run_dir.mkdir(exist_ok=True)
    hostfile = run_dir / "hostfile"
    slots = " slots=" if flavour == "openmpi" else ":"  # hydra: HOST:N
    hostfile.write_text(
        "".join(f"{h['name']}{slots}{ranks_per_host}\n" for h in all_hosts[:count]),
        encoding="utf-8",
    )
    if flavour in ("mpich", "intel"):
        argv = hydra_argv(
            record,
            resolved,
            hostfile,
            count * ranks_per_host,
            user_args,
            command,
            flavour,
            ranks_per_host,
        )
    else:
        argv = mpirun_argv(
            record,
            resolved,
            major,
            hostfile,
            count * ranks_per_host,
            ranks_per_host,
            user_args,
            command,
        )
    env = dict(os.environ)
    # With shaping: serialize the ranks stay SCHED_OTHER: busy-polling SCHED_RR ranks use up
    # the kernel's real-time budget, and its throttling then stalls the (SCHED_FIFO)
    # serialization daemon too (releases measured 0.2-0.5 s late in an Alltoall).
    ranks_rt = realtime and record.get("shaping", "tbf") != "serialize"
    env["COMMODEL_CLUSTER_RT"] = "1" if ranks_rt else "0"
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    if in_user_namespace():
        # the machine's /tmp/ompi.<host>.0 may belong to the real root: use our own
        env.setdefault("OMPI_MCA_orte_tmpdir_base", str(run_dir))
        env.setdefault("PRTE_MCA_prte_tmpdir_base", str(run_dir))
    # what the ranks can record about where they run (the agent passes the environment on)
    env["COMMODEL_CLUSTER"] = record["id"]
    env["COMMODEL_CLUSTER_SPEC"] = record.get("spec_path", "")
    env["COMMODEL_RANKS_PER_HOST"] = str(ranks_per_host)
    try:
        if dry_run:
            print(shlex.join(argv))
            return 0
        if realtime:
            settings.raise_ksoftirqd(os.getpid())
        return run_foreground(argv, env=env)
    finally:
        if realtime and not dry_run:
            settings.release_ksoftirqd(os.getpid())
        shutil.rmtree(run_dir, ignore_errors=True)
