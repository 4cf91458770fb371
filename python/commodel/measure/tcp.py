"""``tcp``: the TCP settings of every host that the timeout models need.

Nothing is timed: every rank reads its host's kernel settings, and rank 0 stores one sample
per rank. The minimum retransmission timeout RTO_min bounds how long a lost segment that no
duplicate ACK reports (the tail of a burst, PlogPT's T_RTO) waits before it is sent again.
Linux takes it from, in this order of precedence, a route's ``rto_min`` (``ip route``),
the per-namespace sysctl ``net.ipv4.tcp_rto_min_us`` (Linux >= 6.11), or the compiled-in
TCP_RTO_MIN of 200 ms. The kernel's timer then fires at about srtt + max(4 rttvar,
RTO_min), so the measured steps sit a little above RTO_min (by the smoothed round trip).

Samples (quantity, value_s): ``rto_min`` (s) per rank, with ``extra`` holding where it came
from, the congestion control algorithm, and the machine: the kernel's ``boot_id`` and the
cores the rank may run on (``cpus``, their numbers). Ranks that report one ``boot_id``
share one machine (an emulated cluster), and ``fit`` then writes the ``cpu`` section
(ranks sharing cores).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from typing import Any

from .common import Context, kernel
from .unit import Measurement, fill

LINUX_RTO_MIN_S = 0.2
SYSCTL_RTO_MIN = "/proc/sys/net/ipv4/tcp_rto_min_us"
SYSCTL_CC = "/proc/sys/net/ipv4/tcp_congestion_control"
BOOT_ID = "/proc/sys/kernel/random/boot_id"  # one per running kernel, in every namespace


@dataclass(frozen=True)
class Options:
    """``tcp`` has no options: it reads every host's settings."""


def validate_options(opts: dict[str, Any]) -> dict[str, Any]:
    return fill(Options, opts, "tcp")


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii") as fh:
            return fh.read().strip()
    except OSError:
        return None


def route_rto_min_s(ip_route_output: str) -> float | None:
    """The largest ``rto_min`` of the routes listed by ``ip -o route show`` (None: none set).

    ``ip`` prints it as ``rto_min 50ms`` (or ``s``, ``us`` units)."""
    best = None
    for line in ip_route_output.splitlines():
        words = line.split()
        for i, word in enumerate(words[:-1]):
            if word == "rto_min":
                value = _route_time_s(words[i + 1])
                if value is not None and (best is None or value > best):
                    best = value
    return best


_ROUTE_UNITS = (("usec", 1e-6), ("us", 1e-6), ("msec", 1e-3), ("ms", 1e-3), ("s", 1.0))


def _route_time_s(text: str) -> float | None:
    """``50ms`` -> 0.05; a bare number is in ms (as ``ip route`` takes it)."""
    number, factor = text, 1e-3
    for suffix, unit in _ROUTE_UNITS:
        if text.endswith(suffix):
            number, factor = text[: -len(suffix)], unit
            break
    try:
        return float(number) * factor
    except ValueError:
        return None


def host_settings() -> dict[str, Any]:
    """This host's RTO_min (s), where it comes from, and the congestion control."""
    try:
        routes = subprocess.run(
            ["ip", "-o", "route", "show"], capture_output=True, text=True, timeout=10
        ).stdout
    except (OSError, subprocess.SubprocessError):
        routes = ""
    by_route = route_rto_min_s(routes)
    sysctl = _read(SYSCTL_RTO_MIN)
    if by_route is not None:
        rto, source = by_route, "route rto_min"
    elif sysctl is not None and sysctl.isdigit():
        rto, source = int(sysctl) * 1e-6, "sysctl net.ipv4.tcp_rto_min_us"
    else:
        rto, source = LINUX_RTO_MIN_S, "Linux default TCP_RTO_MIN"
    return {
        "rto_min_s": rto,
        "source": source,
        "congestion_control": _read(SYSCTL_CC) or "",
        "boot_id": this_machine()[0],
        "cpus": cpus(),
    }


def this_machine() -> tuple[str, list[int]]:
    """This process's machine: its kernel's boot_id ("" where unknown) and the cores the
    process may run on."""
    return _read(BOOT_ID) or "", cpus()


def cpus() -> list[int]:
    """The cores this process may run on (its affinity; all of os.cpu_count() where the
    platform has none)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return list(range(os.cpu_count() or 1))


@kernel("tcp_settings")
def _settings(ctx: Context, params: dict) -> dict[str, Any]:
    return host_settings()


def procedure(opts: dict[str, Any]):
    def run(ctx: Context) -> dict[str, Any]:
        ctx.progress.grow(1)
        step = ctx.step(
            "settings",
            "tcp_settings",
            {},
            rows=lambda outs: [
                {
                    "phase": "settings",
                    "quantity": "rto_min",
                    "value_s": o["rto_min_s"],
                    "src": r,
                    "hosts": ctx.hosts[r],
                    "extra": {k: o[k] for k in ("source", "congestion_control", "boot_id", "cpus")},
                }
                for r, o in enumerate(outs)
            ],
            replay=lambda rows: [
                {"rto_min_s": row["value_s"], **(row.get("extra") or {})} for row in rows
            ],
        )
        ctx.progress.advance()
        return {"campaign": ctx.campaign, "per_rank": step.per_rank, "hosts": ctx.hosts}

    return run


MEASUREMENT = Measurement(
    name="tcp",
    help="the TCP settings of every host (RTO_min, congestion control, the machine)",
    description="Every rank reads its host's TCP settings; nothing is timed.",
    options=Options,
    validate=validate_options,
    procedure=procedure,
    min_ranks=1,
    command=False,
)
