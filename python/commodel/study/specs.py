"""Random cluster specs for the held-out study, drawn from a seed.

:func:`draw_spec` gives the spec (the dict of a ``commodel cluster`` spec file, see
docs/cluster.md) that a seed and an index stand for, always the same one. The
distribution (issue 38):

* 4-12 hosts, a power of two or not;
* racks: 1-4 racks of uneven size, hosts in rack order (a rack of the spec is a run of
  consecutive hosts), or, on 4 or 8 hosts, a binary tree of switches;
* host NICs of 20-100 Mbit/s, log-uniform; rack uplinks of 0.5-3x the NIC; in a tree,
  b(h) for h >= 2 between 0.5 b(h-1) and 2 b(h-1) (PlogPT's b(h+1) <= 2 b(h));
* switch port buffers (toward a host, and on inter-switch links) of 16-256 KiB,
  log-uniform, drawn apart;
* ``shaping: tbf`` (token buckets) or ``serialize`` (every frame at line rate), even odds.

The machine bounds the draw: the emulated network runs on the host's CPUs, which carry
about 500 Mbit/s of traffic with token buckets and much less when the serialization daemon
handles every frame (docs/cluster.md, *Fidelity and limits*). A draw whose hosts together
send more than :data:`MAX_TOTAL_MBIT` (tbf) or :data:`MAX_TOTAL_MBIT_SERIAL` (serialize)
has its NIC rate scaled down to fit, never below 20 Mbit/s; the spec's description says so.
"""

from __future__ import annotations

import math
import os
import random
from typing import Any

MIN_HOSTS, MAX_HOSTS = 4, 12
MIN_NIC_MBIT, MAX_NIC_MBIT = 20.0, 100.0
MIN_BUFFER, MAX_BUFFER = 16 * 1024, 256 * 1024
MAX_TOTAL_MBIT = 480.0  # hosts x NIC with token buckets
MAX_TOTAL_MBIT_SERIAL = 240.0  # hosts x NIC with every frame serialized by the daemon


def _log_uniform(rng: random.Random, low: float, high: float) -> float:
    return math.exp(rng.uniform(math.log(low), math.log(high)))


def _uneven_racks(rng: random.Random, hosts: int, racks: int) -> list[int]:
    """Rack sizes summing to ``hosts``, each >= 1, from a random composition."""
    cuts = sorted(rng.sample(range(1, hosts), racks - 1))
    edges = [0, *cuts, hosts]
    return [b - a for a, b in zip(edges, edges[1:])]


def draw_spec(seed: int, index: int) -> dict[str, Any]:
    """The spec of draw ``index`` of ``seed`` (a dict in the cluster spec format)."""
    rng = random.Random(f"commodel-study/{seed}/{index}")
    hosts = rng.randint(MIN_HOSTS, MAX_HOSTS)
    shaping = rng.choice(("tbf", "serialize"))
    nic = _log_uniform(rng, MIN_NIC_MBIT, MAX_NIC_MBIT)
    cap = MAX_TOTAL_MBIT_SERIAL if shaping == "serialize" else MAX_TOTAL_MBIT
    scaled = ""
    if hosts * nic > cap:
        scaled = f" (drawn at {nic:.0f} Mbit/s, scaled to the machine's {cap:.0f} Mbit/s)"
        nic = max(MIN_NIC_MBIT, cap / hosts)
    # whole Mbit/s, rounded down where scaled so that the hosts stay within the cap
    nic_mbit = max(int(MIN_NIC_MBIT), int(nic) if scaled else int(round(nic)))
    tree = hosts in (4, 8) and rng.random() < 0.5
    if tree:
        depth = hosts.bit_length() - 1
        rates = [float(nic_mbit)]
        for _ in range(1, depth):
            rates.append(rates[-1] * rng.uniform(0.5, 2.0))
        levels = [{"rate": f"{max(1, int(round(r)))}Mbit"} for r in rates]
        topology: dict[str, Any] = {"type": "binary-tree", "levels": levels}
        shape = "binary tree, b(h) = " + "/".join(str(lv["rate"]) for lv in levels)
    else:
        racks = rng.randint(1, min(4, hosts))
        sizes = _uneven_racks(rng, hosts, racks)
        backbone = max(1, int(round(nic_mbit * rng.uniform(0.5, 3.0))))
        topology = {"type": "racks", "racks": sizes, "backbone_rate": f"{backbone}Mbit"}
        shape = f"racks {sizes}, backbone {backbone} Mbit/s"
    buffers = {
        "host_nic": "1MiB",
        "switch_port": int(_log_uniform(rng, MIN_BUFFER, MAX_BUFFER)) // 1024 * 1024,
        "backbone_port": int(_log_uniform(rng, MIN_BUFFER, MAX_BUFFER)) // 1024 * 1024,
    }
    spec: dict[str, Any] = {
        "commodel_cluster": 1,
        "name": f"rs{seed}x{index}",
        "description": (
            f"study draw {index} of seed {seed}: {hosts} hosts, {nic_mbit} Mbit/s NICs{scaled}, "
            f"{shape}, ports {buffers['switch_port'] // 1024}/{buffers['backbone_port'] // 1024} "
            f"KiB, {shaping}"
        ),
        "hosts": hosts,
        "topology": topology,
        "buffers": buffers,
        "tcp": {"congestion_control": "cubic", "rto_min_ms": 200},
        "mtu": 1500,
        "shaping": shaping,
    }
    if not tree:
        spec["nic_rate"] = f"{nic_mbit}Mbit"
    return spec


def spec_dirs(outdir: str, record: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(directory, spec) of every draw of the study (``record``: its study.json), in draw
    order."""
    out = []
    for i in sorted(int(d) for d in record["draws"]):
        spec = draw_spec(int(record["seed"]), i)
        out.append((os.path.join(outdir, spec["name"]), spec))
    return out
