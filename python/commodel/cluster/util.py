"""Small helpers shared by the cluster modules: errors, running commands, root checks."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from ..errors import CommodelError

# Every name we create (namespaces, interfaces, bridges) starts with this prefix.
PREFIX = "cm-"


class ClusterError(CommodelError):
    """A cluster spec that does not validate, or a cluster operation that failed."""


class NotRootError(ClusterError):
    """The emulated cluster needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN)."""

    def __init__(self, what: str = "the emulated cluster") -> None:
        super().__init__(
            f"{what} needs root: it creates network namespaces, veth pairs, bridges and tc "
            "qdiscs and sets per-namespace sysctls. Run as root (e.g. `sudo commodel cluster "
            "...`), or, without root, run your whole experiment in a private user namespace "
            "with `commodel cluster sandbox --spec FILE --congestion-control reno -- CMD...` "
            "(noisier timings; see docs/cluster.md)."
        )


def require_root(what: str = "the emulated cluster") -> None:
    """Raise :class:`NotRootError` unless we are root; also check that the tools exist."""
    if os.geteuid() != 0:
        raise NotRootError(what)
    missing = [tool for tool in ("ip", "tc", "ethtool", "nstat", "unshare") if not tool_path(tool)]
    if missing:
        raise ClusterError(
            f"{what} needs the commands {', '.join(missing)} (Debian: apt-get install iproute2 "
            "ethtool util-linux)"
        )


def in_user_namespace() -> bool:
    """True inside a user namespace that does not map the whole uid range (the sandbox)."""
    try:
        lines = Path("/proc/self/uid_map").read_text(encoding="ascii").split("\n")
    except OSError:
        return False
    entries = [line.split() for line in lines if line.strip()]
    return entries != [["0", "0", "4294967295"]]


def tool_path(name: str) -> str | None:
    """Path of a system tool, also looking in the sbin directories that a user PATH may omit."""
    found = shutil.which(name)
    if found:
        return found
    for directory in ("/usr/sbin", "/sbin", "/usr/bin", "/bin"):
        candidate = os.path.join(directory, name)
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def tool(name: str) -> str:
    found = tool_path(name)
    if found is None:
        raise ClusterError(f"the command {name!r} is not installed")
    return found


def run(
    argv: Sequence[str],
    *,
    input_text: str | None = None,
    check: bool = True,
    what: str | None = None,
    timeout: float = 60.0,
) -> subprocess.CompletedProcess[str]:
    """Run a command, capturing its output; on failure raise :class:`ClusterError`.

    ``what`` says what the command was for, so the message reads "while <what>: ...".
    """
    argv = list(argv)
    if argv and os.sep not in argv[0]:
        argv[0] = tool(argv[0])
    try:
        proc = subprocess.run(
            argv,
            input=input_text,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ClusterError(f"{what or 'running ' + argv[0]}: {exc}") from exc
    if check and proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip()
        shown = " ".join(argv)
        if len(shown) > 200:
            shown = shown[:200] + " ..."
        raise ClusterError(
            f"{'while ' + what + ': ' if what else ''}`{shown}` failed "
            f"(exit {proc.returncode}): {detail}"
        )
    return proc
