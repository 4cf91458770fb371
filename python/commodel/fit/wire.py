"""``network.overhead`` h and ``network.ack`` a (``tcpflow``'s bytes on the wire,
docs/models.md): what a message puts on the wire beyond its m bytes, and what its
acknowledgements put into the reverse direction, from ``measure efficiency``'s streams.

A stream round posts k messages of m bytes per flow at once. Once a token-bucket port has
passed its bucket, each further message takes w / b, w the bytes it puts through its node's
link and b that link's rate, so between k1 and k2 messages per flow the time per message is
s = (T(k2) - T(k1)) / (k2 - k1), T a flow's mean time to its last message, and w = b·s:

* one way (n_2i -> n_2i+1), w = m + h: h(m) = b·s_ow - m (the frames' headers beyond what
  the fitted rate b, a rate of payload, already holds: a larger share of a small message);
* in the ring (n_i -> n_i+1) each node's link carries its own messages and the
  acknowledgements of those it receives: w = m + h + a, so a(m) = b·(s_ring - s_ow).

h and a are the medians over the stream sizes, rounded, at least 0. They are written only
with a bucket (on a port that serializes, PLogP's g(m) holds a message's every byte) and
only from sizes whose one-way stream runs at the wire (b·s_ow >= m; where per-message CPU
work sets the pace, the slope says nothing of the wire). On the emulated two-rack-8 (100
Mbit/s tbf ports) one way took 90 us a 1 KiB message and the ring 100 us
(docs/results/2026-11-27-small-duplex).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

from .bucket import node_rate


def stream_means(samples: list[dict[str, Any]]) -> dict[tuple[str, int, int], float]:
    """(pattern, m, k) -> the mean time of a flow of the stream rounds (phase ``stream``)."""
    times: dict[tuple[str, int, int], list[float]] = defaultdict(list)
    for s in samples:
        if s.get("phase") != "stream" or s.get("quantity") != "flow":
            continue
        count = int((s.get("extra") or {}).get("count", 1))
        times[(str(s["pattern"]), int(s["size_bytes"]), count)].append(float(s["value_s"]))
    return {k: statistics.fmean(v) for k, v in times.items()}


def wire(
    samples: list[dict[str, Any]], network: dict[str, Any]
) -> tuple[int | None, int | None, str]:
    """(h, a, comment): None where the streams do not give it."""
    b = node_rate(network)
    means = stream_means(samples)
    if b is None or not means:
        return None, None, "overhead, ack: no stream rounds (measure efficiency's streams)"
    counts = sorted({k for _, _, k in means})
    if len(counts) < 2:
        return None, None, "overhead, ack: the stream rounds have one message count"
    k1, k2 = counts[0], counts[-1]

    def per_message(pattern: str, m: int) -> float | None:
        t1, t2 = means.get((pattern, m, k1)), means.get((pattern, m, k2))
        return None if t1 is None or t2 is None else (t2 - t1) / (k2 - k1)

    hs, acks, cells = [], [], []
    for m in sorted({m for _, m, _ in means}):
        s_ow = per_message("oneway", m)
        if s_ow is None:
            continue
        if b * s_ow < m:
            cells.append(f"{m} B: {s_ow * 1e6:.1f} us a message one way, below m / b (left out)")
            continue
        hs.append(b * s_ow - m)
        cell = f"{m} B: one way {s_ow * 1e6:.1f} us (h {hs[-1]:.0f} B)"
        s_ring = per_message("duplex", m)
        if s_ring is not None:
            acks.append(b * (s_ring - s_ow))
            cell += f", ring {s_ring * 1e6:.1f} us (a {acks[-1]:.0f} B)"
        cells.append(cell)
    h = max(0, round(statistics.median(hs))) if hs else None
    a = max(0, round(statistics.median(acks))) if acks else None
    detail = "; ".join(cells) or "none"
    return (
        h,
        a,
        (
            f"overhead h = {h} B, ack a = {a} B (a message's wire bytes beyond m, its "
            f"acknowledgements' the other way), from streams of {k1} and {k2} messages a flow "
            f"at b = {b:.4g} B/s: {detail}"
        ),
    )
