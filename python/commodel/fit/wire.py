"""``network.overhead`` h and ``network.ack`` a from a ``wire`` campaign (the bytes the
hosts' interfaces sent; :mod:`commodel.measure.wire`).

Per node and round, the slope between k = 20 and k = 100 steps gives one message's bytes
T and packets P; medians over the nodes and repetitions. Every frame carries the same
headers s_a, which a pure acknowledgement is made of, so

* ``stream``: s_a = the receivers' bytes per packet; rho = the senders' T / M, the frame
  bytes per payload byte of a long message, which is what the fitted payload rate b is a
  rate of (b = frame rate / rho);
* ``ring`` at size m: c = T - m - P s_a, the MPI library's own header bytes of a message
  (Open MPI's TCP BTL: about 22 B); its data frames n_d = ceil((m + c) / MSS) with the
  segment size MSS = MTU + 14 - s_a (14 B of Ethernet header, which the counters include
  and the MTU does not); the rest of P are acknowledgements, n_a = P - n_d. In units of
  b: h(m) = (m + c + n_d s_a) / rho - m and a(m) = n_a s_a / rho.

h and a are the medians of h(m) and a(m) over the ring's sizes. ``tcpflow`` takes them as
constants; h(m) itself falls with m inside a segment, since b already holds the headers
of the full segments of long messages. On a physical Ethernet every frame also takes
24 B of preamble, frame check and gap that the counters do not show (the emulated
cluster's shapers count what the counters do): there h and a come out low by about 24 B
a frame.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from typing import Any

ETHERNET_HEADER = 14


def per_message(samples: list[dict[str, Any]]) -> dict[tuple[str, int, str], list[tuple]]:
    """(pattern, size, role) -> [(bytes, packets, seconds, mtu)], one per node and
    repetition: bytes, packets and seconds of one message, the slope between the two step
    counts."""
    by: dict[tuple, dict[int, tuple]] = defaultdict(dict)
    for s in samples:
        if s.get("quantity") != "round" or s.get("phase") != "wire":
            continue
        x = s.get("extra") or {}
        key = (s["pattern"], int(s["size_bytes"]), x.get("role"), s["src"], s["repetition"])
        by[key][int(s["n_msgs"])] = (
            float(x["tx_bytes"]),
            float(x["tx_packets"]),
            float(s["value_s"]),
            int(x.get("mtu") or 0),
        )
    out: dict[tuple[str, int, str], list[tuple]] = defaultdict(list)
    for (pattern, m, role, _src, _rep), ks in by.items():
        if len(ks) < 2:
            continue
        k0, k1 = min(ks), max(ks)
        d = k1 - k0
        out[(pattern, m, role)].append(
            tuple((ks[k1][i] - ks[k0][i]) / d for i in range(3)) + (ks[k1][3],)
        )
    return out


def _median(values) -> float:
    return float(statistics.median(values))


def overhead_and_ack(samples: list[dict[str, Any]]) -> tuple[int | None, int | None, str]:
    """(h, a) in bytes, or (None, None) where the campaign cannot give them, and a comment
    with the counts they come from."""
    hosts = {s.get("hosts") for s in samples if s.get("phase") == "wire"}
    if len(hosts) < 2:
        return (
            None,
            None,
            (
                "overhead, ack: not fitted (the wire campaign ran on one host: its messages "
                "went over loopback, which the interfaces counted do not see)"
            ),
        )
    msgs = per_message(samples)
    stream = {role: v for (p, _m, role), v in msgs.items() if p == "stream"}
    sizes = sorted(m for (p, m, _r) in msgs if p == "ring")
    if not sizes or "send" not in stream or "ack" not in stream:
        return None, None, "overhead, ack: not fitted (the wire campaign has no ring on 3 nodes)"
    big = next(m for (p, m, r) in msgs if p == "stream")
    sent = _median(v[0] for v in stream["send"])
    acks_b = _median(v[0] for v in stream["ack"])
    acks_p = _median(v[1] for v in stream["ack"])
    if sent <= 0 or acks_p <= 0:
        return (
            None,
            None,
            (
                "overhead, ack: not fitted (the interfaces counted no bytes of the streams: "
                "did the traffic go over an interface not counted?)"
            ),
        )
    s_a = acks_b / acks_p
    rho = sent / big
    mtu = max(v[3] for v in stream["send"])
    mss = mtu + ETHERNET_HEADER - s_a if mtu else None
    hs, as_, cells = [], [], []
    for m in sizes:
        rows = msgs[("ring", m, "ring")]
        t, p = _median(v[0] for v in rows), _median(v[1] for v in rows)
        step = _median(v[2] for v in rows)
        c = t - m - p * s_a
        n_d = max(1, math.ceil((m + max(c, 0.0)) / mss)) if mss and mss > 0 else 1
        n_a = max(p - n_d, 0.0)
        h = (t - n_a * s_a) / rho - m
        a = n_a * s_a / rho
        hs.append(h)
        as_.append(a)
        cells.append(
            f"{m} B {t:.0f} B in {p:.2f} frames (c {c:.0f} B, {n_a:.2f} acks) a step of "
            f"{step * 1e6:.0f} us: h {h:.0f}, a {a:.0f}"
        )
    h, a = max(round(_median(hs)), 0), max(round(_median(as_)), 0)
    note = (
        f"overhead {h} B, ack {a} B: medians of h(m), a(m) in units of b from the bytes "
        f"the interfaces sent in rings of lone messages (s_a = {s_a:.0f} B of headers a "
        f"frame, {rho:.4f} frame bytes a payload byte in streams of {big} B, MTU {mtu}): "
        + "; ".join(cells)
    )
    return h, a, note


def complete(sections: dict[str, Any], comments: dict[str, str], db, camp) -> None:
    """``network.overhead`` h and ``network.ack`` a of the fitted network from the wire
    campaign's counts, with a comment; nothing but the comment where they cannot be given."""
    if "network" not in sections:
        return
    h, a, note = overhead_and_ack(db.samples(camp.id))
    if h is not None:
        sections["network"]["overhead"] = h
        sections["network"]["ack"] = a
    comments["network"] = comments.get("network", "") + "\n" + note


def summary(result: dict[str, Any], db) -> str:
    """What ``measure wire`` prints: the rounds, and h and a or why they are not fitted."""
    _h, _a, note = overhead_and_ack(db.samples(result["campaign"]))
    head = f"campaign {result['campaign']}: {result['rounds']} rounds on {result['nodes']} nodes"
    return head + "\n" + note.replace(": ", ":\n  ", 1).replace("; ", "\n  ")
