"""Running commodel under mpirun from the tests (helpers for tests marked ``mpi``).

The MPI tests run real Open MPI ranks over loopback TCP (``--mca btl tcp,self``). They are
skipped, with the reason, when mpirun or mpi4py is missing; in CI (``CI`` set) they fail
instead, since CI installs Open MPI.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _mpi_missing() -> str | None:
    if shutil.which("mpirun") is None:
        return "mpirun not found (install Open MPI: apt-get install openmpi-bin libopenmpi-dev)"
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return "mpi4py is not installed (pip install mpi4py)"
    return None


MISSING = _mpi_missing()

needs_mpi = pytest.mark.skipif(
    MISSING is not None and not os.environ.get("CI"), reason=str(MISSING)
)


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    e["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    # no interference from a user's MCA settings; loopback only
    e["OMPI_MCA_btl"] = "tcp,self"
    e["OMPI_MCA_btl_tcp_if_include"] = "lo"
    e["OMPI_MCA_oob_tcp_if_include"] = "lo"
    e["OMPI_MCA_rmaps_base_oversubscribe"] = "1"
    # the subprocesses import the same commodel as the tests
    import commodel

    package_root = str(Path(commodel.__file__).resolve().parent.parent)
    e["PYTHONPATH"] = package_root + os.pathsep + e.get("PYTHONPATH", "")
    return e


def command(n: int, *args: str, module: bool = True) -> list[str]:
    head = ["mpirun", "-n", str(n), "--oversubscribe"]
    if os.geteuid() == 0:
        head.append("--allow-run-as-root")
    if module:
        return head + [sys.executable, "-m", "commodel", *args]
    return head + [sys.executable, *args]


def run(
    n: int, *args: str, timeout: float = 240, module: bool = True
) -> subprocess.CompletedProcess:
    """Run ``commodel ARGS`` (or a script when module=False) on n ranks; returns the result."""
    proc = subprocess.Popen(
        command(n, *args, module=module),
        env=env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(f"mpirun timed out after {timeout} s\n{out}\n{err}") from None
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def start(n: int, *args: str) -> subprocess.Popen:
    """Start ``commodel ARGS`` on n ranks in its own process group (see kill_group)."""
    return subprocess.Popen(
        command(n, *args),
        env=env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def descendants(pid: int) -> list[int]:
    """The pids of every process below ``pid`` (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                stat = handle.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL mpirun and every rank it started, all at once, then reap mpirun.

    Open MPI puts the ranks in process groups of their own, so they are found as
    descendants of mpirun (only processes this test started)."""
    pids = descendants(proc.pid)
    os.killpg(proc.pid, signal.SIGKILL)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    proc.communicate()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.05)


def connect_when_released(path, timeout: float = 60.0):
    """A read-write DuckDB connection to ``path`` once killed processes let go of its lock
    (a process killed while writing may take a moment to exit on a loaded machine)."""
    import duckdb

    deadline = time.monotonic() + timeout
    while True:
        try:
            return duckdb.connect(str(path))
        except duckdb.IOException as exc:
            if "lock" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def commodel(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``python -m commodel ARGS`` without MPI."""
    return subprocess.run(
        [sys.executable, "-m", "commodel", *args],
        env=env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
