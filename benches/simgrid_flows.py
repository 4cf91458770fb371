"""SimGrid beside `maxmin`: our platform as SimGrid XML, the s4u program, the comparison.

``benches/simgrid/flows.cpp`` (ours) runs a GOAL file's send/recv operations on SimGrid's
CM02 model with latency and bandwidth factors of 1, weight-S 0 and no cross-traffic, every
message eager: the semantics of ``maxmin`` on a platform without ``plogp.S``. It is built
with g++ against Debian's ``libsimgrid-dev`` (SimGrid 3.32), never vendored.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

SOURCE = Path(__file__).resolve().parent / "simgrid" / "flows.cpp"
HEADER = Path("/usr/include/simgrid/s4u.hpp")


def platform_xml(platform: dict) -> str:
    """SimGrid platform XML for a ``racks`` platform dict: rack i is a cluster of hosts
    ``node-K`` (rank K on node K) with split-duplex private links (``nic`` B/s,
    ``nic_latency`` s) to its router; each rack's uplink (``backbone`` B/s,
    ``backbone_latency`` s) is split-duplex too, and a route between racks takes the source
    rack's uplink up and the destination rack's down: the tree of commodel's ``racks``."""
    net = platform["network"]
    if net.get("topology") != "racks" or net.get("nic_bidir") is not None:
        raise ValueError("platform_xml: only a `racks` network without nic_bidir is supported")
    nic, nic_lat = float(net["nic"]), float(net.get("nic_latency", 0.0))
    bb, bb_lat = float(net["backbone"]), float(net.get("backbone_latency", 0.0))
    lines = [
        "<?xml version='1.0'?>",
        '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
        '<platform version="4.1">',
        '<zone id="world" routing="Full">',
    ]
    first = 0
    racks = [int(n) for n in net["racks"]]
    for i, n in enumerate(racks):
        lines.append(
            f'  <cluster id="rack{i}" prefix="node-" suffix="" radical="{first}-{first + n - 1}" '
            f'speed="1Gf" bw="{nic!r}Bps" lat="{nic_lat!r}s" sharing_policy="SPLITDUPLEX" '
            f'router_id="rack{i}-router"/>'
        )
        first += n
    for i in range(len(racks)):
        lines.append(
            f'  <link id="uplink{i}" bandwidth="{bb!r}Bps" latency="{bb_lat!r}s" '
            'sharing_policy="SPLITDUPLEX"/>'
        )
    for i in range(len(racks)):
        for j in range(len(racks)):
            if i != j:
                lines += [
                    f'  <zoneRoute src="rack{i}" dst="rack{j}" gw_src="rack{i}-router" '
                    f'gw_dst="rack{j}-router" symmetrical="NO">',
                    f'    <link_ctn id="uplink{i}" direction="UP"/>',
                    f'    <link_ctn id="uplink{j}" direction="DOWN"/>',
                    "  </zoneRoute>",
                ]
    lines += ["</zone>", "</platform>", ""]
    return "\n".join(lines)


def build(out: Path) -> tuple[Path | None, str]:
    """(the built program, "") or (None, why it cannot be built here)."""
    if shutil.which("g++") is None:
        return None, "g++ is not installed"
    if not HEADER.exists():
        return None, "SimGrid is not installed (apt-get install libsimgrid-dev)"
    out.mkdir(parents=True, exist_ok=True)
    binary = out / "flows"
    if binary.exists() and binary.stat().st_mtime >= SOURCE.stat().st_mtime:
        return binary, ""
    part = out / f"flows.{os.getpid()}"
    cmd = ["g++", "-O2", "-std=c++17", str(SOURCE), "-o", str(part), "-lsimgrid"]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        return None, f"building {SOURCE.name} failed:\n{run.stderr[-2000:]}"
    os.replace(part, binary)  # whole, even if another process builds it at the same time
    return binary, ""


def parse_output(text: str) -> tuple[float, list[float], dict[tuple[int, int, int], list[float]]]:
    """(makespan s, finish s per rank, receive end times s per (src, dst, tag) in order)
    from the program's output."""
    makespan, finish = 0.0, []
    ends: dict[tuple[int, int, int], list[float]] = defaultdict(list)
    for line in text.splitlines():
        w = line.split()
        if w[0] == "rank":
            finish.append(float(w[2]))
        elif w[0] == "makespan":
            makespan = float(w[1])
        elif w[0] == "message":
            ends[(int(w[1]), int(w[2]), int(w[3]))].append(float(w[6]))
    return makespan, finish, ends


def worst_difference(ours: list[float], theirs: list[float]) -> float:
    """The largest relative difference between two equally long lists of times."""
    if len(ours) != len(theirs):
        return float("inf")
    return max(
        (abs(a - b) / max(abs(a), abs(b)) for a, b in zip(ours, theirs) if a != b), default=0.0
    )


def compare(prediction, text: str, messages: bool) -> tuple[float, int]:
    """(largest relative difference, times compared) between a commodel
    :class:`~commodel.prediction.Prediction` and the program's output: the makespan, every
    rank's finish and, with ``messages``, every message's end (the receive's completion)."""
    makespan, finish, ends = parse_output(text)
    ours = [prediction.makespan_s] + [r.finish_s for r in prediction.ranks]
    theirs = [makespan] + finish
    if messages:
        mine: dict[tuple[int, int, int], list[float]] = defaultdict(list)
        for m in prediction.messages:
            mine[(m.src, m.dst, m.tag)].append(m.end_s)
        if set(mine) != set(ends):
            return float("inf"), 0
        for key in sorted(mine):
            ours += sorted(mine[key])
            theirs += sorted(ends[key])
    return worst_difference(ours, theirs), len(ours)
