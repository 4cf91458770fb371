"""``measure tree``: b(h) and d(h) of PlogPT's binary-tree network (Nomura et al. 2007, III-C).

The P = 2^D ranks are the leaves of a perfect binary tree, in rank order (one rank per
node). For every height h = 1..D:

* **load**: every rank k whose bit h-1 is 0 sends a burst of n messages of m bytes to
  k xor 2^(h-1) (unidirectional), or both partners send at once (bidirectional). Every
  flow crosses exactly the edges of height <= h. Each receiver times its burst; b(h) is
  the sum of the flow bandwidths inside one height-h subtree (averaged over the P/2^h
  subtrees; bidirectional: per direction).
* **d(h)**: during the burst, the leftmost rank 0 and the rightmost rank 2^h - 1 of the
  first height-h subtree ping-pong small messages; the same ping-pong is timed without
  load. d(h) is the difference of the two roundtrip times (bidirectional: half of it).

Every burst and ping-pong series is one step of the results database.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import CommodelError
from ..stats import STATISTICS
from .common import Context, kernel
from .unit import Measurement, fill, option

TAG_BURST, TAG_PING = 21, 22


@dataclass(frozen=True)
class Options:
    """``measure tree``'s options (the campaign's options in the results database)."""

    burst_size: int = option(1 << 20, "message size of the bursts (1MiB)", kind="size")  # m
    burst_bytes: int = option(1 << 24, "bytes per flow and burst (16MiB)", kind="size")  # n m
    ping_size: int = option(1, "ping-pong message size (1)", kind="size")
    pings: int = option(20, "ping-pongs per burst (20)", kind="int")
    reps: int = option(3, "bursts per height and direction (3)", kind="int")
    bidirectional: bool = option(
        True,
        "skip the bidirectional measurement",
        kind="flag",
        flag="--unidirectional-only",
        const=False,
    )
    statistic: str = option("median", "central value of repetitions (median)", choices=STATISTICS)


def validate_options(opts: dict[str, Any]) -> dict[str, Any]:
    out = fill(Options, opts, "measure tree")
    if int(out["burst_size"]) < 1:
        raise CommodelError(f"--burst-size must be >= 1 byte, got {out['burst_size']}")
    if int(out["burst_bytes"]) < int(out["burst_size"]):
        raise CommodelError(
            f"--burst-bytes ({out['burst_bytes']}) must be at least --burst-size "
            f"({out['burst_size']})"
        )
    for key in ("pings", "reps"):
        if int(out[key]) < 1:
            raise CommodelError(f"--{key} must be >= 1, got {out[key]}")
    if out["statistic"] not in ("mean", "median", "min"):
        raise CommodelError(f"--statistic must be mean, median or min, got {out['statistic']!r}")
    out["bidirectional"] = bool(out["bidirectional"])
    return out


def _prepare(ctx: Context, p: dict) -> dict:
    p = dict(p)
    size = ctx.size
    if size & (size - 1) or size < 2:
        raise CommodelError(f"measure tree needs a power of two ranks (>= 2), got {size}")
    p["buf"] = ctx.buffer(int(p.get("m", 0)), "send")
    p["rbuf"] = ctx.buffer(int(p.get("m", 0)), "recv")
    p["pbuf"] = ctx.buffer(int(p["ping_size"]), "ping")
    return p


def _pingpong(ctx: Context, p: dict, h: int) -> list[float] | None:
    """Ranks 0 and 2^h - 1 ping-pong; returns the roundtrip times on rank 0."""
    comm, MPI = ctx.comm, ctx.MPI
    right = (1 << h) - 1
    size = int(p["ping_size"])
    pbuf = p["pbuf"]
    out = []
    if ctx.rank == 0:
        for _ in range(int(p["pings"])):
            t0 = MPI.Wtime()
            comm.Send([pbuf, size, MPI.BYTE], right, TAG_PING)
            comm.Recv([pbuf, size, MPI.BYTE], right, TAG_PING)
            out.append(MPI.Wtime() - t0)
        return out
    if ctx.rank == right:
        for _ in range(int(p["pings"])):
            comm.Recv([pbuf, size, MPI.BYTE], 0, TAG_PING)
            comm.Send([pbuf, size, MPI.BYTE], 0, TAG_PING)
    return None


@kernel("tree.burst", _prepare)
def _k_burst(ctx: Context, p: dict) -> Any:
    """Bursts between k and k xor 2^(h-1), ping-pong under that load; per rank
    (partner, seconds to receive the burst or None, pings or None)."""
    comm, MPI = ctx.comm, ctx.MPI
    h, m, n = int(p["h"]), int(p["m"]), int(p["n"])
    partner = ctx.rank ^ (1 << (h - 1))
    left = (ctx.rank >> (h - 1)) & 1 == 0
    sends = left or p["bidirectional"]
    recvs = (not left) or p["bidirectional"]
    reqs = []
    t0 = MPI.Wtime()
    if recvs:
        reqs += [comm.Irecv([p["rbuf"], m, MPI.BYTE], partner, TAG_BURST) for _ in range(n)]
    if sends:
        reqs += [comm.Isend([p["buf"], m, MPI.BYTE], partner, TAG_BURST) for _ in range(n)]
    pings = _pingpong(ctx, p, h)
    if recvs:
        MPI.Request.Waitall(reqs[:n])
        elapsed = MPI.Wtime() - t0
        MPI.Request.Waitall(reqs[n:])
    else:
        MPI.Request.Waitall(reqs)
        elapsed = None
    return (partner, elapsed, pings)


@kernel("tree.pingpong", _prepare)
def _k_pingpong(ctx: Context, p: dict) -> Any:
    return _pingpong(ctx, p, int(p["h"]))


def procedure(opts: dict[str, Any]):
    def run(ctx: Context) -> dict[str, Any]:
        if ctx.size & (ctx.size - 1):
            raise CommodelError(f"measure tree needs a power of two ranks, got {ctx.size}")
        depth = ctx.size.bit_length() - 1
        m = int(opts["burst_size"])
        n = max(1, int(opts["burst_bytes"]) // m)
        patterns = ["uni", "bi"] if opts["bidirectional"] else ["uni"]
        ctx.progress.grow(depth * (1 + len(patterns)) * int(opts["reps"]))
        base = {"ping_size": int(opts["ping_size"]), "pings": int(opts["pings"])}
        for h in range(1, depth + 1):
            right = (1 << h) - 1
            with ctx.phase(f"h={h}"):
                for rep in range(int(opts["reps"])):
                    _idle_step(ctx, h, rep, base, right)
                    for pattern in patterns:
                        _burst_step(ctx, h, rep, pattern, m, n, base, right)
        return {"campaign": ctx.campaign, "ranks": ctx.size}

    return run


def _pingpong_rows(ctx: Context, h: int, rep: int, pattern: str, values, base: dict, right: int):
    """Sample rows of the ping-pongs between rank 0 and ``right`` (idle or under a burst)."""
    return [
        {
            "phase": f"h={h}",
            "pattern": pattern,
            "quantity": "pingpong",
            "size_bytes": base["ping_size"],
            "n_ranks": ctx.size,
            "repetition": rep * base["pings"] + i,
            "value_s": v,
            "src": 0,
            "dst": right,
            "hosts": f"{ctx.hosts[0]},{ctx.hosts[right]}",
            "extra": {"h": h},
        }
        for i, v in enumerate(values)
    ]


def _idle_step(ctx: Context, h: int, rep: int, base: dict, right: int) -> None:
    key = f"tree/pingpong/h={h}/rep={rep}"
    ctx.step(
        key,
        "tree.pingpong",
        dict(base, h=h, m=0),
        rows=lambda outs: _pingpong_rows(ctx, h, rep, "idle", outs[0], base, right),
        replay=lambda rows: [[r["value_s"] for r in rows]],
    )
    ctx.progress.advance(1, f"tree h={h} ping-pong")


def _burst_step(ctx, h, rep, pattern, m, n, base, right) -> None:
    key = f"tree/{pattern}/h={h}/rep={rep}"

    def rows(outs):
        out = []
        for rank, (partner, elapsed, _pings) in enumerate(outs):
            if elapsed is not None:
                out.append(
                    {
                        "phase": f"h={h}",
                        "pattern": pattern,
                        "quantity": "burst",
                        "size_bytes": m,
                        "n_msgs": n,
                        "n_ranks": ctx.size,
                        "repetition": rep,
                        "value_s": elapsed,
                        "src": partner,
                        "dst": rank,
                        "hosts": f"{ctx.hosts[partner]},{ctx.hosts[rank]}",
                        "extra": {"h": h},
                    }
                )
        return out + _pingpong_rows(ctx, h, rep, pattern, outs[0][2], base, right)

    ctx.step(
        key,
        "tree.burst",
        dict(base, h=h, m=m, n=n, bidirectional=pattern == "bi"),
        rows=rows,
        replay=lambda stored: [None],
    )
    ctx.progress.advance(1, f"tree h={h} {pattern} burst")


MEASUREMENT = Measurement(
    name="tree",
    help="b(h), d(h) of the binary-tree network (PlogPT III-C), on 2^D ranks",
    description="PlogPT's bandwidth b(h) and buffer delay d(h) for every tree height; "
    "one rank per node, ranks in tree order.",
    options=Options,
    validate=validate_options,
    procedure=procedure,
)
