"""Where the emulated clusters are recorded: one JSON state file per cluster, plus a file of
system settings we changed and must restore.

The state directory is ``$COMMODEL_STATE_DIR`` if set, else ``/run/commodel`` for root, else
``$XDG_RUNTIME_DIR/commodel`` (or ``/tmp/commodel-<uid>``). It holds:

* ``<id>.json``: the cluster's plan (namespaces, hosts, addresses, links, shapers) and its
  status (``building``, ``up``). It is written *before* anything is created, so that
  ``down`` finds everything even after a crash (and ``down`` also scans namespaces by name
  prefix, ``cm-<id>-``).
* ``<id>.agent``: the launcher agent that mpirun uses instead of ssh.
* ``<id>.serialize-stats`` and ``<id>.serialize-log``: the serialization daemon's counters (JSON,
  rewritten every second) and output, with ``shaping: serialize``.
* ``saved-settings.json``: original values of system settings outside our namespaces that we
  changed (the root namespace's ``net.ipv4.tcp_allowed_congestion_control``, ksoftirqd
  scheduling); it exists only while a change is in force and ``down`` restores from it.
* ``lock``: an flock serialising changes to the above.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .util import ClusterError

STATE_VERSION = 1
SETTINGS_FILE = "saved-settings.json"


def state_dir() -> Path:
    override = os.environ.get("COMMODEL_STATE_DIR")
    if override:
        return Path(override)
    if os.geteuid() == 0:
        return Path("/run/commodel")
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return Path(runtime) / "commodel"
    return Path(f"/tmp/commodel-{os.getuid()}")


def ensure_state_dir() -> Path:
    directory = state_dir()
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise ClusterError(
            f"cannot create the state directory {directory}: {exc.strerror}"
        ) from None
    return directory


@contextlib.contextmanager
def locked() -> Iterator[Path]:
    """Hold the state directory's lock (released by the kernel if we die)."""
    directory = ensure_state_dir()
    with open(directory / "lock", "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield directory
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def state_path(cluster_id: str) -> Path:
    return state_dir() / f"{cluster_id}.json"


def agent_path(cluster_id: str) -> Path:
    return state_dir() / f"{cluster_id}.agent"


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def write_state(cluster_id: str, data: dict[str, Any]) -> Path:
    ensure_state_dir()
    path = state_path(cluster_id)
    _write_json(path, {"commodel_cluster_state": STATE_VERSION, **data})
    return path


def read_state(cluster_id: str) -> dict[str, Any] | None:
    path = state_path(cluster_id)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ClusterError(f"cannot read the state file {path}: {exc.strerror}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ClusterError(
            f"{path}: damaged state file ({exc}); `commodel cluster down --name "
            f"{cluster_id}` still removes the cluster by name prefix"
        ) from None
    return data


def remove_state(cluster_id: str) -> None:
    directory = state_dir()
    daemon_files = (
        directory / f"{cluster_id}.serialize-stats",
        directory / f"{cluster_id}.serialize-log",
    )
    tmp = state_path(cluster_id).with_name(state_path(cluster_id).name + ".tmp")  # a kill mid-write
    for path in (state_path(cluster_id), agent_path(cluster_id), tmp, *daemon_files):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    if directory.is_dir():
        for run_dir in directory.glob(f"{cluster_id}.run-*"):
            shutil.rmtree(run_dir, ignore_errors=True)


def listed_clusters() -> list[str]:
    directory = state_dir()
    if not directory.is_dir():
        return []
    return sorted(p.stem for p in directory.glob("*.json") if p.name != SETTINGS_FILE)


def read_settings() -> dict[str, Any]:
    path = state_dir() / SETTINGS_FILE
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, json.JSONDecodeError) as exc:
        raise ClusterError(f"cannot read {path}: {exc}") from None


def write_settings(data: dict[str, Any]) -> None:
    """Write the saved-settings file (under :func:`locked`); an empty dict removes it."""
    path = ensure_state_dir() / SETTINGS_FILE
    if not data:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return
    _write_json(path, data)
