"""System settings outside our namespaces that the cluster changes, and their restoration.

Two kinds, both recorded in ``saved-settings.json`` (see :mod:`.state`) *before* they are
changed, so that ``commodel cluster down`` restores them after a crash:

* ``net.ipv4.tcp_allowed_congestion_control`` in the root namespace: a child namespace may
  only make an algorithm its default if the root namespace allows it. ``up`` adds the spec's
  algorithm, sets it in the host namespaces and restores the list at once (sockets keep
  using the namespace default afterwards).
* the scheduling of the ``ksoftirqd/N`` kernel threads, raised to SCHED_FIFO 2 while
  ``cluster mpirun`` runs (packet processing then preempts the SCHED_RR ranks), restored
  when the last such run ends. Several runs may share the raise: ``users`` lists their PIDs.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from . import state
from .util import ClusterError, in_user_namespace

ALLOWED_CC = "net.ipv4.tcp_allowed_congestion_control"


def _sysctl_path(name: str) -> Path:
    return Path("/proc/sys") / name.replace(".", "/")


def read_sysctl(name: str) -> str:
    try:
        return _sysctl_path(name).read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ClusterError(f"cannot read sysctl {name}: {exc.strerror}") from None


def write_sysctl(name: str, value: str) -> None:
    try:
        _sysctl_path(name).write_text(value + "\n", encoding="utf-8")
    except OSError as exc:
        raise ClusterError(f"cannot set sysctl {name} to {value!r}: {exc.strerror}") from None


@contextlib.contextmanager
def congestion_control_allowed(algorithm: str) -> Iterator[None]:
    """Make ``algorithm`` allowed in the root namespace for the duration of the block.

    Must be entered with :func:`state.locked` held. The original list is recorded before the
    change and restored on every exit path (and by ``down`` after a crash).
    """
    if not _sysctl_path(ALLOWED_CC).exists():
        yield
        return
    available = read_sysctl("net.ipv4.tcp_available_congestion_control").split()
    if algorithm not in available:
        raise ClusterError(
            f"TCP congestion control {algorithm!r} is not available in this kernel "
            f"(available: {' '.join(available)}; try `modprobe tcp_{algorithm}`)"
        )
    original = read_sysctl(ALLOWED_CC)
    if algorithm in original.split():
        yield
        return
    if in_user_namespace():
        raise ClusterError(
            f"TCP congestion control {algorithm!r} is not allowed by the root namespace "
            f"(net.ipv4.tcp_allowed_congestion_control = {original!r}) and cannot be allowed "
            f"from a user namespace: choose one of {', '.join(original.split())} "
            "(--congestion-control, or tcp.congestion_control in the spec)"
        )
    saved = state.read_settings()
    saved.setdefault("sysctl", {}).setdefault(ALLOWED_CC, original)
    state.write_settings(saved)
    try:
        write_sysctl(ALLOWED_CC, f"{original} {algorithm}")
        yield
    finally:
        restore_sysctls()


def restore_sysctls() -> list[str]:
    """Restore every recorded sysctl (with :func:`state.locked` held); return what changed."""
    saved = state.read_settings()
    restored = []
    for name, value in saved.pop("sysctl", {}).items():
        if read_sysctl(name) != value:
            write_sysctl(name, value)
            restored.append(f"{name} = {value}")
    state.write_settings(saved)
    return restored


def ksoftirqd_pids() -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            comm = (entry / "comm").read_text().strip()
        except OSError:
            continue
        if comm.startswith("ksoftirqd/"):
            pids.append(int(entry.name))
    return sorted(pids)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def raise_ksoftirqd(user_pid: int, priority: int = 2) -> None:
    """Put ksoftirqd threads under SCHED_FIFO ``priority`` for ``user_pid``'s run."""
    with state.locked():
        saved = state.read_settings()
        sched = saved.get("ksoftirqd")
        if sched is None:
            originals = {}
            for pid in ksoftirqd_pids():
                try:
                    policy = os.sched_getscheduler(pid)
                    prio = os.sched_getparam(pid).sched_priority
                except OSError:
                    continue
                originals[str(pid)] = {"policy": policy, "priority": prio}
            sched = {"originals": originals, "users": []}
        sched["users"] = [p for p in sched["users"] if _alive(p) and p != user_pid] + [user_pid]
        saved["ksoftirqd"] = sched
        state.write_settings(saved)
        for pid in sched["originals"]:
            with contextlib.suppress(OSError):
                os.sched_setscheduler(int(pid), os.SCHED_FIFO, os.sched_param(priority))


def release_ksoftirqd(user_pid: int | None) -> bool:
    """Drop ``user_pid`` (None: only dead users) and restore ksoftirqd if nobody is left."""
    with state.locked():
        return _release_locked(user_pid)


def _release_locked(user_pid: int | None) -> bool:
    saved = state.read_settings()
    sched = saved.get("ksoftirqd")
    if sched is None:
        return False
    sched["users"] = [p for p in sched["users"] if _alive(p) and p != user_pid]
    if sched["users"]:
        state.write_settings(saved)
        return False
    for pid, orig in sched["originals"].items():
        try:
            comm = Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            continue
        if not comm.startswith("ksoftirqd/"):
            continue
        with contextlib.suppress(OSError):
            os.sched_setscheduler(int(pid), orig["policy"], os.sched_param(orig["priority"]))
    del saved["ksoftirqd"]
    state.write_settings(saved)
    return True


def restore_all() -> list[str]:
    """Restore everything recorded whose users are gone (``down``); with the lock held."""
    restored = restore_sysctls()
    if _release_locked(None):
        restored.append("ksoftirqd scheduling")
    return restored
