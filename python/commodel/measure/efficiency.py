"""``measure efficiency``: how much TCP loses when traffic runs both ways.

One rank per node stands for the node (the first rank of each host; with a single host,
every rank). With the nodes n_0 .. n_{N-1}, three rounds are timed for every size m:

* ``oneway``:   n_{2i} -> n_{2i+1}, every pair at once (the reference);
* ``exchange``: n_{2i} <-> n_{2i+1}, both directions of every pair at once;
* ``duplex``:   n_i -> n_{i+1 mod N}, a ring: every node sends and receives, with different
  peers (needs N >= 3).

and, for every size of ``alltoall_sizes`` (default: 4 KiB doubling up to the largest size):

* ``alltoall``: n_i -> n_{i-k mod N} for k = 1 .. N-1, every node to every other at once,
  each node's sends posted in that order after its receives, as Open MPI's linear alltoall
  posts them (needs N >= 3): every node has N - 1 senders (fan-in);

and, for every size of ``fanout_sizes`` (default: 1 KiB doubling up to the largest size, at
most 256 KiB):

* ``fanout``:   n_0 -> n_1, n_2, ..., n_k (k = min(3, N - 1), needs N >= 3), posted at once in
  that order: whether one node's NIC sends messages posted together one after the other
  (the peers finish at about 1, 2, 3 message times) or shares itself among them (all at
  about k).

Each repetition starts from a synchronized barrier; every flow is timed from there to its
receive's end. Repetitions continue until the 95% confidence
interval of every flow's mean is within ``ci`` of it, or ``max_reps``. The flows are the
same kernel as ``measure concurrent`` (samples with ``quantity = flow``).

The fit (:mod:`commodel.fit.efficiency`) turns the flow times into the efficiency tables of
the ``tcpflow`` model: e_x(m) = the later of two one-way flows of a repetition / the later
flow of an exchanging pair, e_d(m) = one-way flow time / ring flow time, means over flows
and repetitions. The ``alltoall`` rounds give the fan-in table e_f(m), fitted through the
model itself once the platform's other sections are known (:mod:`commodel.fit.fanin`).
"""

from __future__ import annotations

from typing import Any

from ..errors import CommodelError
from .common import Context, increasing_sizes
from .concurrent import ci_ok, flows_step

KiB = 1024
MiB = 1024 * KiB

DEFAULTS: dict[str, Any] = {
    "sizes": [4 * KiB, 16 * KiB, 64 * KiB, 256 * KiB, 1 * MiB],
    "fanout_sizes": None,  # None: 1 KiB, 2 KiB, ... up to max(sizes), at most 256 KiB
    "alltoall_sizes": None,  # None: 4 KiB, 8 KiB, ... up to max(sizes)
    "min_reps": 5,
    "max_reps": 15,
    "ci": 0.05,
}

PATTERNS = ("oneway", "exchange", "duplex")
FANOUT_PEERS = 3


FANOUT_MAX = 256 * KiB


def default_fanout_sizes(sizes: list[int]) -> list[int]:
    """1 KiB doubling up to the largest of ``sizes``, at most 256 KiB (at least 1 KiB)."""
    out = [KiB]
    while out[-1] * 2 <= min(max(sizes), FANOUT_MAX):
        out.append(out[-1] * 2)
    return out


def default_alltoall_sizes(sizes: list[int]) -> list[int]:
    """4 KiB doubling up to the largest of ``sizes`` (that size alone below 4 KiB)."""
    out = [4 * KiB]
    while out[-1] * 2 <= max(sizes):
        out.append(out[-1] * 2)
    return out if max(sizes) >= 4 * KiB else [max(sizes)]


def validate_options(opts: dict[str, Any]) -> dict[str, Any]:
    out = dict(DEFAULTS)
    out.update({k: v for k, v in opts.items() if v is not None})
    sizes = out["sizes"] = increasing_sizes("--sizes", out["sizes"])
    fan = out.get("fanout_sizes")
    out["fanout_sizes"] = (
        default_fanout_sizes(sizes) if fan is None else increasing_sizes("--fanout-sizes", fan)
    )
    a2a = out.get("alltoall_sizes")
    out["alltoall_sizes"] = (
        default_alltoall_sizes(sizes) if a2a is None else increasing_sizes("--alltoall-sizes", a2a)
    )
    if int(out["min_reps"]) < 2:
        raise CommodelError(f"--min-reps must be >= 2, got {out['min_reps']}")
    if int(out["max_reps"]) < int(out["min_reps"]):
        raise CommodelError(f"--max-reps must be >= {out['min_reps']}, got {out['max_reps']}")
    return out


def node_ranks(hosts: list[str]) -> list[int]:
    """The rank standing for each node: the first rank of every host, or every rank when
    all run on one host."""
    first: dict[str, int] = {}
    for r, h in enumerate(hosts):
        first.setdefault(h, r)
    if len(first) >= 2:
        return sorted(first.values())
    return list(range(len(hosts)))


def flows(pattern: str, nodes: list[int]) -> list[tuple[int, int]]:
    """The (src, dst) ranks of one round of ``pattern`` on ``nodes``."""
    pairs = [(nodes[2 * i], nodes[2 * i + 1]) for i in range(len(nodes) // 2)]
    if pattern == "oneway":
        return pairs
    if pattern == "exchange":
        return pairs + [(b, a) for a, b in pairs]
    if pattern == "duplex":
        n = len(nodes)
        return [(nodes[i], nodes[(i + 1) % n]) for i in range(n)] if n >= 3 else []
    if pattern == "alltoall":
        n = len(nodes)
        return (
            [(nodes[i], nodes[(i - k) % n]) for k in range(1, n) for i in range(n)]
            if n >= 3
            else []
        )
    if pattern == "fanout":
        k = min(FANOUT_PEERS, len(nodes) - 1)
        return [(nodes[0], nodes[i]) for i in range(1, k + 1)] if k >= 2 else []
    raise ValueError(pattern)


def procedure(opts: dict[str, Any]):
    def run(ctx: Context) -> dict[str, Any]:
        nodes = node_ranks(ctx.hosts)
        if len(nodes) < 2:
            raise CommodelError("measure efficiency needs at least 2 nodes")
        rounds = [
            (pattern, size, f)
            for size in opts["sizes"]
            for pattern in PATTERNS
            if (f := flows(pattern, nodes))
        ]
        a2a = flows("alltoall", nodes)
        rounds += [("alltoall", size, a2a) for size in opts["alltoall_sizes"] if a2a]
        fan = flows("fanout", nodes)
        rounds += [("fanout", size, fan) for size in opts["fanout_sizes"] if fan]
        ctx.progress.grow(len(rounds))
        with ctx.phase("efficiency"):
            for pattern, size, fl in rounds:
                _round(ctx, opts, pattern, size, fl)
                ctx.progress.advance(1, f"efficiency {pattern} {size} B")
        return {"campaign": ctx.campaign, "nodes": len(nodes)}

    return run


def _round(
    ctx: Context, opts: dict[str, Any], pattern: str, size: int, fl: list[tuple[int, int]]
) -> list[float]:
    """Repeat one round until every flow's mean has converged; the round times (the last
    flow's end), one per repetition."""
    per_flow: dict[int, list[float]] = {i: [] for i in range(len(fl))}
    spans: list[float] = []
    batch = 0
    while True:
        reps = int(opts["min_reps"]) if batch == 0 else 1
        first = len(spans)

        res = flows_step(
            ctx, f"efficiency/{pattern}/m={size}/b={batch}", "efficiency", pattern, size, fl,
            reps, first, n_msgs=len(fl),
        )  # fmt: skip
        by_rep: dict[int, float] = {}
        for rank_out in res.per_rank:
            for r, rep in enumerate(rank_out or []):
                for i, t in rep:
                    per_flow[i].append(t)
                    by_rep[r] = max(by_rep.get(r, 0.0), t)
        spans += [by_rep[r] for r in sorted(by_rep)]
        batch += 1
        if len(spans) >= int(opts["max_reps"]) or (
            len(spans) >= int(opts["min_reps"])
            and all(ci_ok(v, float(opts["ci"])) for v in per_flow.values())
        ):
            return spans
