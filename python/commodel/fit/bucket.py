"""``network.bucket``: the token bucket of a node's link, from PLogP's g(m) (``tcpflow``
gives a faster link as many seconds of its rate, docs/models.md).

A token-bucket shaper (Linux ``tbf``, a cloud instance's rate limit, the emulated cluster's
default ``shaping: tbf``) lets a port that has been idle pass B bytes at once and holds the
rest to its rate b. PLogP times lone messages, so on such a port its gap is g(m) = (m - B) /
b for m above B (plus the per-message costs, which are small there), and m - b·g(m) is B
at every such size; below B it is about m. On a port that serializes every frame g(m) >=
m / b and m - b·g(m) <= 0.

B comes from the sizes that rise at the wire rate: PLogP's sizes from 1 KiB (below, g is
mostly the per-message cost) to Open MPI's eager limit (64 KiB: above it g holds the
rendezvous round trip) where v(m) = m - b·g(m) < m / 2, the sizes at least twice the
bucket; b is the fitted network's node link (``unidirectional.b[0]``, or ``nic``). A
least-squares line g(m) = (m - B) / b' through them gives B where it meets g = 0, with its
own slope 1/b': the receiver's per-byte work and an error of a percent in b tilt v(m) (by
~500 B between 4 and 64 KiB on the emulated cluster, so the median of v(m) moved with the
sizes PLogP happened to refine), not the line's intercept. With one such size B = v(m).
None when no size qualifies or B is not positive: the links serialize.
"""

from __future__ import annotations

from typing import Any

from ..openmpi import EAGER_LIMIT
from .lmo import line


def node_rate(network: dict[str, Any]) -> float | None:
    """b, the rate of a node's own link in a fitted ``network`` section (bytes/s)."""
    if "unidirectional" in network:
        return float(network["unidirectional"]["b"][0])
    nic = network.get("nic")
    return None if nic is None else float(nic)


def bucket(plogp: dict[str, Any], network: dict[str, Any]) -> tuple[int | None, str]:
    """B in bytes (None: no bucket) and a comment with the sizes it is fitted from."""
    b = node_rate(network)
    if b is None:
        return None, "bucket: the network has no node link rate"
    sizes, gs = plogp["sizes"], plogp["g"]
    # a size whose g(m) equals a neighbour's is a block the non-decreasing fit pooled (one
    # slow size averaged with those after it), not a measurement: a flat block of 57-65
    # KiB tilted the line to B = 3262-3836 B in two calibrations (docs/models.md)
    pooled = {i for i in range(1, len(gs)) if gs[i] == gs[i - 1]}
    pooled |= {i - 1 for i in pooled}
    rising = [
        (m, g)
        for i, (m, g) in enumerate(zip(sizes, gs))
        if 1024 <= m < EAGER_LIMIT and m - b * g < m / 2 and i not in pooled
    ]
    if not rising:
        return None, "bucket: none (no PLogP size below 64 KiB with m - b g(m) < m / 2)"
    cells = ", ".join(f"{m} B {m - b * g:.0f}" for m, g in rising)
    if len(rising) == 1:
        value, how = rising[0][0] - b * rising[0][1], f"m - b g(m) (b = {b:.4g} B/s)"
    else:
        alpha, beta = line([m for m, _ in rising], [g for _, g in rising])
        if beta <= 0:
            return None, f"bucket: none, g(m) does not rise from 1 KiB to 64 KiB: {cells}"
        value = -alpha / beta
        how = f"where g(m) = (m - B) / b' meets 0 (b' = {1 / beta:.4g}, b = {b:.4g} B/s)"
    if value <= 0:
        return None, f"bucket: none, the links serialize (B = {value:.0f} B {how})"
    return round(value), (
        f"bucket: {round(value)} B, {how}, fitted where m - b g(m) is below m / 2: {cells}"
    )
