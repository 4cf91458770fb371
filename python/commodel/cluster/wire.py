"""Bytes on the wire of a TCP/IPv4 message over Ethernet, and its store-and-forward time.

What a frame of an IP packet costs on a port (headers, preamble, inter-frame gap), the IP
packets a TCP message is cut into, and the time a message takes through ports that each
serialize every frame before passing it on: the closed forms the ``shaping: serialize``
daemon (cluster/serialize.py) is checked against.
"""

from __future__ import annotations

# Sizes of a TCP/IPv4 segment with the timestamp option (Linux's default): 20 bytes of IP
# header and 32 of TCP header around at most 1448 bytes of payload at MTU 1500.
TCP_IP_HEADERS = 52


def wire_bytes(ip_bytes: int) -> int:
    """Bytes an IP packet takes on the wire: + 14 MAC header + 4 FCS (at least 64), + 8
    preamble and start delimiter + 12 inter-frame gap."""
    return max(ip_bytes + 18, 64) + 20


# preamble and start delimiter (8) and destination address (6): what a cut-through switch
# reads of a frame before it starts sending it on
CUT_THROUGH_BYTES = 8 + 6


def segments(payload: int, mtu: int = 1500) -> list[int]:
    """IP packet sizes of a TCP message of ``payload`` bytes (full segments, then the rest)."""
    mss = mtu - TCP_IP_HEADERS
    sizes = [mss + TCP_IP_HEADERS] * (payload // mss)
    if payload % mss or payload == 0:
        sizes.append(payload % mss + TCP_IP_HEADERS)
    return sizes


def store_and_forward_s(
    payload: int, rates_bit_s: list[float], mtu: int = 1500, cut_through: bool = False
) -> float:
    """Time from handing a TCP message of ``payload`` bytes to the first port until its last
    frame has left the last port, when every port on the path (rates in order) serializes
    each frame before passing it on and the whole message is sent at once (window open):
    ``d[h][i] = max(r[h][i], d[h][i-1]) + 8 w_i / R_h``, where a frame is ready at hop h when
    it has left hop h-1, ``r[h][i] = d[h-1][i]``. With ``cut_through`` (``switching:
    cut-through``), a switch port whose rate is not above the previous one's may start once
    the preamble and destination address (14 bytes) have arrived: ``r[h][i] = d[h-1][i] -
    8 w_i / R_(h-1) + 8 * 14 / R_(h-1)``."""
    sizes = segments(payload, mtu)
    departures = [0.0] * len(sizes)
    previous_rate = None
    for rate in rates_bit_s:
        previous = 0.0
        for i, ip_bytes in enumerate(sizes):
            ready = departures[i]
            if cut_through and previous_rate is not None and rate <= previous_rate:
                ready -= (wire_bytes(ip_bytes) - CUT_THROUGH_BYTES) * 8 / previous_rate
            previous = max(ready, previous) + wire_bytes(ip_bytes) * 8 / rate
            departures[i] = previous
        previous_rate = rate
    return departures[-1]
