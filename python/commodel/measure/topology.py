"""``measure topology``: which nodes share a bottleneck, at what rate, from the hosts alone.

One rank per node stands for the node (the first rank of each host); the other ranks sit
the rounds out. On the N nodes (docs/measurement.md, *topology*):

1. ``latency``: every pair ping-pongs ``pings`` messages of ``ping_size`` bytes (one
   frame), N - 1 rounds of disjoint pairs (a round-robin tournament); the shortest round
   trip of each pair is kept.
2. ``solo``: the flow of ``size`` bytes from node i to node i + 1 alone, for every i.
3. ``shift`` rounds s = 1..N-1: every node i sends ``size`` bytes to node i + s at once,
   ``reps`` times each; each receiver times its flow from a common start.
4. ``confirm``: :func:`commodel.topology_inference.infer` proposes the groups of nodes behind
   shared uplinks from what 1-3 measured; for every proposed group, as many of its nodes as
   there are outside it (in its parent group) send to distinct ones of those at once, so
   that only that group's uplink is loaded. A group that is not there predicts slowdowns
   these rounds do not show, and the fit drops it.

Samples: ``quantity = flow`` (``src``, ``dst`` node ranks, ``value_s`` the flow's time,
``pattern`` the round: ``solo``, ``shift``, ``confirm``, ``extra.round`` its flows) and
``quantity = rtt``. The fit is :mod:`commodel.fit.topology`, which writes the ``network``
section (``crossbar`` or ``racks``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..errors import CommodelError
from .common import Context, kernel
from .efficiency import is_node, node_state, nodes_at_least
from .unit import Measurement, fill, option

KiB = 1024
TAG_FLOW, TAG_PING, TAG_WARM = 81, 82, 83


@dataclass(frozen=True)
class Options:
    """``topology``'s options (the campaign's options in the results database)."""

    size: int = option(256 * KiB)  # S, bytes per flow
    reps: int = option(2)  # repetitions of every round
    pings: int = option(20)
    ping_size: int = option(1400)  # one frame at MTU 1500, MPI's header included
    confirm: bool = option(True)


def validate_options(opts: dict[str, Any]) -> dict[str, Any]:
    out = fill(Options, opts, "topology")
    for key, low in (("size", 1), ("reps", 1), ("pings", 1), ("ping_size", 1)):
        if int(out[key]) < low:
            raise CommodelError(f"--{key.replace('_', '-')} must be >= {low}, got {out[key]}")
        out[key] = int(out[key])
    out["confirm"] = bool(out["confirm"])
    return out


def _prepare(ctx: Context, params: dict) -> dict:
    return node_state(ctx, params, int(params.get("size", 1)), "topology")


@kernel("topology.round", prepare=_prepare, sits_out=lambda ctx, state: not is_node(ctx))
def _round(ctx: Context, state: dict) -> dict[int, list[float]]:
    """The flows (node indices) of one round, ``reps`` times; per flow this node receives,
    its times from the round's common start."""
    MPI, sub, m = ctx.MPI, state["sub"], int(state["size"])
    me = sub.Get_rank()
    flows = [tuple(f) for f in state["flows"]]
    mine_r = [(k, s) for k, (s, d) in enumerate(flows) if d == me]
    mine_s = [(k, d) for k, (s, d) in enumerate(flows) if s == me]
    out: dict[int, list[float]] = {k: [] for k, _ in mine_r}
    for _ in range(int(state["reps"])):
        reqs = [sub.Irecv([state["rbuf"], m, MPI.BYTE], s, TAG_FLOW) for _, s in mine_r]
        sub.Barrier()
        t0 = MPI.Wtime()
        sends = [sub.Isend([state["buf"], m, MPI.BYTE], d, TAG_FLOW) for _, d in mine_s]
        for _ in range(len(reqs)):
            i = MPI.Request.Waitany(reqs)
            out[mine_r[i][0]].append(MPI.Wtime() - t0)
        MPI.Request.Waitall(sends)
    return out


def tournament(n: int) -> list[list[tuple[int, int]]]:
    """N - 1 (N even) or N (odd) rounds of disjoint pairs covering every pair once."""
    players: list[int | None] = list(range(n)) + ([None] if n % 2 else [])
    k = len(players)
    out = []
    for _ in range(k - 1):
        pairs = [(players[i], players[k - 1 - i]) for i in range(k // 2)]
        out.append([(a, b) for a, b in pairs if a is not None and b is not None])
        players = [players[0], players[-1], *players[1:-1]]
    return out


@kernel("topology.latency", prepare=_prepare, sits_out=lambda ctx, state: not is_node(ctx))
def _latency(ctx: Context, state: dict) -> dict[str, float]:
    """Per pair this node leads (``"a,b"``): the shortest round trip of ``pings``."""
    MPI, sub = ctx.MPI, state["sub"]
    me, size = sub.Get_rank(), int(state["ping_size"])
    buf = state["buf"]
    out = {}
    for pairs in tournament(sub.Get_size()):
        sub.Barrier()
        for a, b in pairs:
            if me == a:
                best = float("inf")
                for _ in range(int(state["pings"])):
                    t = MPI.Wtime()
                    sub.Send([buf, size, MPI.BYTE], b, TAG_PING)
                    sub.Recv([buf, size, MPI.BYTE], b, TAG_PING)
                    best = min(best, MPI.Wtime() - t)
                out[f"{a},{b}"] = best
            elif me == b:
                for _ in range(int(state["pings"])):
                    sub.Recv([buf, size, MPI.BYTE], a, TAG_PING)
                    sub.Send([buf, size, MPI.BYTE], a, TAG_PING)
    return out


@kernel("topology.warmup", prepare=_prepare, sits_out=lambda ctx, state: not is_node(ctx))
def _warmup(ctx: Context, state: dict) -> None:
    """A small message between every pair, both ways: every connection open."""
    MPI, sub = ctx.MPI, state["sub"]
    me, n = sub.Get_rank(), sub.Get_size()
    buf, rbuf = state["buf"], state["rbuf"]
    reqs = [sub.Irecv([rbuf, 1, MPI.BYTE], j, TAG_WARM) for j in range(n) if j != me]
    reqs += [sub.Isend([buf, 1, MPI.BYTE], j, TAG_WARM) for j in range(n) if j != me]
    MPI.Request.Waitall(reqs)


def shift_round(n: int, s: int) -> list[tuple[int, int]]:
    return [(i, (i + s) % n) for i in range(n)]


def procedure(opts: dict[str, Any]):
    def run(ctx: Context) -> dict[str, Any]:
        from ..topology_inference import explore, rounds_of

        nodes = nodes_at_least(ctx, 2, "measure topology")
        n = len(nodes)
        reps = int(opts["reps"])
        ctx.progress.grow(2 + n + (n - 1))
        rows: list[dict[str, Any]] = []
        with ctx.phase("topology"):
            ctx.step(
                "topology/warmup", "topology.warmup", {"size": 1}, lambda outs: [], lambda _: []
            )
            _latency_step(ctx, opts, nodes, rows)
            ctx.progress.advance(2, "topology latency")
            for i in range(n):
                _round_step(ctx, opts, nodes, "solo", f"i={i}", [(i, (i + 1) % n)], reps, rows)
                ctx.progress.advance(1, f"topology solo {i}")
            for s in range(1, n):
                _round_step(ctx, opts, nodes, "shift", f"s={s}", shift_round(n, s), reps, rows)
                ctx.progress.advance(1, f"topology shift {s}")
            if opts["confirm"]:

                def measure(flows: tuple[tuple[int, int], ...]) -> None:
                    name = "c=" + ";".join(f"{a}-{b}" for a, b in flows)
                    ctx.progress.grow(1)
                    _round_step(ctx, opts, nodes, "confirm", name, list(flows), reps, rows)
                    ctx.progress.advance(1, f"topology confirm {name}")

                explore(lambda: rounds_of(rows, n, int(opts["size"])), measure)
        return {"campaign": ctx.campaign, "nodes": n, "rows": len(rows)}

    return run


def _round_step(
    ctx: Context,
    opts: dict,
    nodes: list[int],
    pattern: str,
    name: str,
    flows: list[tuple[int, int]],
    reps: int,
    collected: list[dict[str, Any]],
) -> None:
    n = len(nodes)
    label = json.dumps(flows)

    def rows(outs: list[Any]) -> list[dict[str, Any]]:
        out = []
        for i, r in enumerate(nodes):
            for k, times in (outs[r] or {}).items():
                src, dst = flows[k]
                assert dst == i
                for rep, t in enumerate(times):
                    out.append(
                        {
                            "phase": "topology",
                            "pattern": pattern,
                            "quantity": "flow",
                            "size_bytes": int(opts["size"]),
                            "n_ranks": n,
                            "repetition": rep,
                            "value_s": t,
                            "src": nodes[src],
                            "dst": nodes[dst],
                            "hosts": f"{ctx.hosts[nodes[src]]},{ctx.hosts[nodes[dst]]}",
                            "extra": {"round": label, "flow": k},
                        }
                    )
        collected.extend(out)
        return out

    def replay(stored: list[dict[str, Any]]) -> list[Any]:
        collected.extend(stored)
        return []

    params = {"flows": flows, "size": int(opts["size"]), "reps": reps}
    ctx.step(f"topology/{pattern}/{name}", "topology.round", params, rows, replay)


def _latency_step(ctx: Context, opts: dict, nodes: list[int], collected: list) -> None:
    n = len(nodes)

    def rows(outs: list[Any]) -> list[dict[str, Any]]:
        out = []
        for r in nodes:
            for pair, t in (outs[r] or {}).items():
                a, b = (int(x) for x in pair.split(","))
                out.append(
                    {
                        "phase": "topology",
                        "pattern": "latency",
                        "quantity": "rtt",
                        "size_bytes": int(opts["ping_size"]),
                        "n_ranks": n,
                        "repetition": 0,
                        "value_s": t,
                        "src": nodes[a],
                        "dst": nodes[b],
                        "hosts": f"{ctx.hosts[nodes[a]]},{ctx.hosts[nodes[b]]}",
                    }
                )
        collected.extend(out)
        return out

    def replay(stored: list[dict[str, Any]]) -> list[Any]:
        collected.extend(stored)
        return []

    params = {
        "size": int(opts["ping_size"]),
        "ping_size": opts["ping_size"],
        "pings": opts["pings"],
    }
    ctx.step("topology/latency", "topology.latency", params, rows, replay)


MEASUREMENT = Measurement(
    name="topology",
    help="which nodes share a bottleneck, at what rate, from the hosts alone",
    description="Solo flows, shift rounds, one-frame round trips and confirmation rounds "
    "per proposed group of nodes behind a shared uplink.",
    options=Options,
    validate=validate_options,
    procedure=procedure,
    command=False,
)
