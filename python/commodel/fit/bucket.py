"""``network.bucket``: the token bucket of a node's link, from PLogP's g(m) (``tcpflow``
gives a faster link as many seconds of its rate, docs/models.md).

A token-bucket shaper (Linux ``tbf``, a cloud instance's rate limit, the emulated cluster's
default ``shaping: tbf``) lets a port that has been idle pass B bytes at once and holds the
rest to its rate b. PLogP times lone messages, so on such a port its gap is g(m) = (m - B) /
b for m above B (plus the per-message costs, which are small there), and m - b·g(m) is B
at every such size; below B it is about m. On a port that serializes every frame g(m) >=
m / b and m - b·g(m) <= 0.

B is the median of v(m) = m - b·g(m) over PLogP's sizes from 1 KiB (below, g is mostly the
per-message cost) to Open MPI's eager limit (64 KiB: above it g holds the rendezvous round
trip) where v(m) < m / 2, the sizes at least twice the bucket (the part of the table that
rises at the wire rate); b is the fitted
network's node link (``unidirectional.b[0]``, or ``nic``). None when no size qualifies or
the median is not positive: the links serialize.
"""

from __future__ import annotations

import statistics
from typing import Any

from .cpu import EAGER_LIMIT


def node_rate(network: dict[str, Any]) -> float | None:
    """b, the rate of a node's own link in a fitted ``network`` section (bytes/s)."""
    if "unidirectional" in network:
        return float(network["unidirectional"]["b"][0])
    nic = network.get("nic")
    return None if nic is None else float(nic)


def bucket(plogp: dict[str, Any], network: dict[str, Any]) -> tuple[int | None, str]:
    """B in bytes (None: no bucket) and a comment with the values it is the median of."""
    b = node_rate(network)
    if b is None:
        return None, "bucket: the network has no node link rate"
    v = [
        (m, m - b * g)
        for m, g in zip(plogp["sizes"], plogp["g"])
        if 1024 <= m < EAGER_LIMIT and m - b * g < m / 2
    ]
    if not v:
        return None, "bucket: none (no PLogP size below 64 KiB with m - b g(m) < m / 2)"
    value = statistics.median(x for _, x in v)
    cells = ", ".join(f"{m} B {x:.0f}" for m, x in v)
    if value <= 0:
        return None, f"bucket: none, the links serialize (median m - b g(m) {value:.0f} B)"
    return round(value), (
        f"bucket: {round(value)} B, the median of m - b g(m) (b = {b:.4g} B/s) where it is "
        f"below m / 2: {cells}"
    )
