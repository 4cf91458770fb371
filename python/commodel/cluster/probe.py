"""A small TCP bulk sender and receiver, to check the rates the emulated cluster carries.

Run inside emulated hosts (``commodel cluster exec HOST -- python3 -m commodel.cluster.probe
...``)::

    probe recv --port 5001 [--flows N]      # prints one JSON object when all N flows end
    probe send --to 198.18.0.11 --port 5001 --seconds 3
    probe echo --port 5002 --sizes 1,1024 --reps 200                  # the ping-pong's far end
    probe ping --to 198.18.0.11 --port 5002 --sizes 1,1024 --reps 200  # half round trips

The receiver samples, for every flow, the cumulative bytes received against
``time.monotonic()`` (one clock for all namespaces of the machine), so flows measured by
different receivers can be compared over a common window. :func:`window_rate` gives the
rate of a set of flows over the window in which all of them were running, leaving out a
warm-up (TCP slow start).
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

SAMPLE_INTERVAL_S = 0.01
CHUNK = 256 * 1024


def _receive(conn: socket.socket, peer: str, flows: list[dict[str, Any]], lock: threading.Lock):
    samples: list[tuple[float, int]] = []
    total = 0
    buf = bytearray(CHUNK)
    view = memoryview(buf)
    last = 0.0
    with conn:
        while True:
            n = conn.recv_into(view)
            now = time.monotonic()
            if n == 0:
                break
            total += n
            if now - last >= SAMPLE_INTERVAL_S or not samples:
                samples.append((now, total))
                last = now
        samples.append((time.monotonic(), total))
    with lock:
        flows.append({"peer": peer, "bytes": total, "samples": samples})


def receive(port: int, flows: int, bind: str = "0.0.0.0", timeout_s: float = 120.0) -> dict:
    """Accept ``flows`` connections on ``port`` and count what each delivers until closed."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((bind, port))
    server.listen(flows)
    server.settimeout(timeout_s)
    print(json.dumps({"listening": port}), flush=True)
    results: list[dict[str, Any]] = []
    lock = threading.Lock()
    threads = []
    with server:
        for _ in range(flows):
            conn, addr = server.accept()
            conn.settimeout(timeout_s)
            thread = threading.Thread(
                target=_receive, args=(conn, f"{addr[0]}:{addr[1]}", results, lock), daemon=True
            )
            thread.start()
            threads.append(thread)
    for thread in threads:
        thread.join()
    return {"port": port, "flows": results}


def send(
    to: str,
    port: int,
    seconds: float,
    start_at: float | None = None,
    connect_timeout_s: float = 10.0,
) -> dict:
    """Send as fast as TCP allows for ``seconds``, then close and wait for the peer's close.

    With ``start_at`` (a ``time.monotonic()`` value, one clock for every namespace of the
    machine), connect early and start sending at that instant, so that flows started by
    separate processes overlap."""
    deadline = time.monotonic() + connect_timeout_s
    while True:
        try:
            sock = socket.create_connection((to, port), timeout=5.0)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)
    payload = b"\x5a" * CHUNK
    sent = 0
    if start_at is not None:
        time.sleep(max(0.0, start_at - time.monotonic()))
    start = time.monotonic()
    end = start + seconds
    with sock:
        sock.settimeout(None)
        while time.monotonic() < end:
            sock.sendall(payload)
            sent += len(payload)
        sock.shutdown(socket.SHUT_WR)
        while sock.recv(4096):
            pass
    return {"to": f"{to}:{port}", "bytes": sent, "start": start, "end": time.monotonic()}


def _recv_exactly(sock: socket.socket, view: memoryview, size: int) -> None:
    got = 0
    while got < size:
        n = sock.recv_into(view[got:size])
        if n == 0:
            raise ConnectionError("the peer closed the connection mid-message")
        got += n


def _echo_or_ping(sock: socket.socket, sizes: Sequence[int], reps: int, warmup: int, timed: bool):
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    buf = bytearray(max(sizes))
    view = memoryview(buf)
    out = {}
    for size in sizes:
        samples = []
        for i in range(warmup + reps):
            if timed:
                start = time.perf_counter()
                sock.sendall(view[:size])
                _recv_exactly(sock, view, size)
                if i >= warmup:
                    samples.append((time.perf_counter() - start) / 2)
            else:
                _recv_exactly(sock, view, size)
                sock.sendall(view[:size])
        out[str(size)] = samples
    return out


def echo(port: int, sizes: Sequence[int], reps: int, warmup: int = 20, timeout_s: float = 120.0):
    """Send back every message of a :func:`ping` with the same ``sizes`` and ``reps``."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("0.0.0.0", port))
    server.listen(1)
    server.settimeout(timeout_s)
    print(json.dumps({"listening": port}), flush=True)
    with server:
        conn, _ = server.accept()
    with conn:
        conn.settimeout(timeout_s)
        _echo_or_ping(conn, sizes, reps, warmup, timed=False)
    return {"port": port, "echoed": list(sizes)}


def ping(to: str, port: int, sizes: Sequence[int], reps: int, warmup: int = 20) -> dict:
    """Ping-pong messages of each size with an :func:`echo` over one TCP connection (Nagle
    off); return every half round trip (seconds) per size, after ``warmup`` untimed ones."""
    sock = socket.create_connection((to, port), timeout=10.0)
    with sock:
        sock.settimeout(120.0)
        samples = _echo_or_ping(sock, sizes, reps, warmup, timed=True)
    return {"to": f"{to}:{port}", "half_round_trip_s": samples}


def window_rate(flows: Sequence[dict[str, Any]], warmup_s: float = 0.5, tail_s: float = 0.1):
    """Aggregate payload rate (bit/s) of ``flows`` over the window in which all run.

    The window starts ``warmup_s`` after the last flow's first byte and ends ``tail_s``
    before the first flow's last byte. Returns (total bit/s, [per-flow bit/s], window s).
    """
    start = max(f["samples"][0][0] for f in flows) + warmup_s
    end = min(f["samples"][-1][0] for f in flows) - tail_s
    if end - start < 0.2:
        raise ValueError(f"the flows overlap for only {max(end - start, 0):.3f} s after warm-up")
    rates = []
    for f in flows:
        rates.append(
            (_bytes_at(f["samples"], end) - _bytes_at(f["samples"], start)) * 8 / (end - start)
        )
    return sum(rates), rates, end - start


def _bytes_at(samples: Sequence[Sequence[float]], t: float) -> float:
    """Cumulative bytes at time ``t``, interpolated linearly between samples."""
    prev_t, prev_b = samples[0]
    if t <= prev_t:
        return float(prev_b)
    for cur_t, cur_b in samples[1:]:
        if cur_t >= t:
            if cur_t == prev_t:
                return float(cur_b)
            return prev_b + (cur_b - prev_b) * (t - prev_t) / (cur_t - prev_t)
        prev_t, prev_b = cur_t, cur_b
    return float(prev_b)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m commodel.cluster.probe",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="role", required=True)
    p_recv = sub.add_parser("recv", help="receive flows and print their byte timelines as JSON")
    p_recv.add_argument("--port", type=int, default=5001)
    p_recv.add_argument("--flows", type=int, default=1)
    p_recv.add_argument("--bind", default="0.0.0.0")
    p_send = sub.add_parser("send", help="send for a while")
    p_send.add_argument("--to", required=True)
    p_send.add_argument("--port", type=int, default=5001)
    p_send.add_argument("--seconds", type=float, default=3.0)
    p_send.add_argument("--start-at", type=float, help="time.monotonic() at which to start")
    for name, role_help in (("echo", "answer a ping"), ("ping", "time half round trips")):
        p_pp = sub.add_parser(name, help=role_help)
        if name == "ping":
            p_pp.add_argument("--to", required=True)
        p_pp.add_argument("--port", type=int, default=5002)
        p_pp.add_argument("--sizes", required=True, help="message sizes in bytes, e.g. 1,1024")
        p_pp.add_argument("--reps", type=int, default=200)
    args = parser.parse_args(argv)
    if args.role == "recv":
        result = receive(args.port, args.flows, args.bind)
    elif args.role == "send":
        result = send(args.to, args.port, args.seconds, args.start_at)
    else:
        try:
            sizes = [int(x) for x in args.sizes.split(",")]
        except ValueError:
            parser.error(
                f"--sizes: expected sizes in bytes separated by commas, got {args.sizes[:60]!r}"
            )
        if args.role == "echo":
            result = echo(args.port, sizes, args.reps)
        else:
            result = ping(args.to, args.port, sizes, args.reps)
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
