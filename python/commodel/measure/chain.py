"""``measure chain``: the timeouts of a pairwise exchange whose steps follow each other.

A pairwise exchange (Open MPI's pairwise alltoall) runs n - 1 steps; in step s node i sends
m bytes to node i + s and receives from node i - s, and starts step s + 1 as soon as its own
step s is done. A node done early is already sending the next step's message while its
neighbours are still in the last one, so a port between switches carries the messages of
two steps at once. With a small port buffer that loses the tail of a message now and then,
which only the retransmission timeout (RTO_min, 200 ms on Linux) recovers. A step alone
(barriers between steps), one burst up a rack's uplink, or one both ways do not show it:
the held-out study's dev clusters counted none below 128 KiB where the chained steps
counted 0.02-0.05 timeouts a step (docs/models.md, *Timeouts at ports between switches*).

So this part runs the exchange as Open MPI does, one rank per node, at each of ``sizes``:
``min_reps`` rounds, then more up to ``reps`` while the size's rounds have taken less than
``budget`` seconds; the hosts count their ``TCPTimeouts`` (``/proc/net/netstat``) over each
round. ``calibrate`` runs it first, on connections as fresh as an application's: on a dev
cluster the same exchange counted 0.67 timeouts a round at 16 KiB as the first thing of
its mpirun and 0.13 after other probes had run. The fit (:mod:`commodel.fit.chain`) finds
the chance q(m) that a message sharing a port between switches loses its tail, with which
``tcpflow`` predicts as many timeouts a round, where the fitted network has such ports.

Samples: ``quantity = chain`` (``value_s`` the round's time, the last node's end),
``size_bytes`` m, ``repetition``, ``extra``: ``timeouts`` (all hosts' TCPTimeouts during the
round, or null where a counter cannot be read).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import CommodelError
from .common import Context, increasing_sizes, kernel, seconds
from .efficiency import is_node, node_state, nodes_at_least
from .ports import timeouts_counter
from .unit import Measurement, fill, option

KiB = 1024
TAG_CHAIN = 92


@dataclass(frozen=True)
class Options:
    """``measure chain``'s options (the campaign's options in the results database)."""

    sizes: list[int] = option(
        [16 * KiB, 64 * KiB, 256 * KiB],
        "message sizes of the exchange, comma-separated (16KiB,64KiB,256KiB)",
        kind="sizes",
    )
    min_reps: int = option(4, "rounds of the exchange at every size, at least (4)", kind="int")
    reps: int = option(12, "rounds at every size, at most (12)", kind="int")
    budget: float = option(
        8.0, "seconds of rounds at a size after which no more are run (8)", kind="float"
    )


def validate_options(opts: dict[str, Any]) -> dict[str, Any]:
    out = fill(Options, opts, "measure chain")
    out["sizes"] = increasing_sizes("--sizes", out["sizes"])
    for key in ("min_reps", "reps"):
        if int(out[key]) < 1:
            raise CommodelError(f"--{key.replace('_', '-')} must be >= 1, got {out[key]}")
        out[key] = int(out[key])
    if out["reps"] < out["min_reps"]:
        raise CommodelError(
            f"--reps ({out['reps']}) must be at least --min-reps ({out['min_reps']})"
        )
    out["budget"] = seconds("--budget", out["budget"])
    return out


def _prepare(ctx: Context, params: dict) -> dict:
    return node_state(ctx, params, int(params["size"]), "chain")


@kernel("chain.round", prepare=_prepare, sits_out=lambda ctx, state: not is_node(ctx))
def _round(ctx: Context, state: dict) -> tuple[float, int | None]:
    """One round of the exchange: (this node's end from the common start; the TCPTimeouts
    its host counted during the round)."""
    MPI, sub, m = ctx.MPI, state["sub"], int(state["size"])
    me, n = sub.Get_rank(), sub.Get_size()
    before = timeouts_counter()
    sub.Barrier()
    t0 = MPI.Wtime()
    for s in range(1, n):  # as Open MPI's pairwise alltoall: receive posted, then send
        recv = sub.Irecv([state["rbuf"], m, MPI.BYTE], (me - s) % n, TAG_CHAIN)
        send = sub.Isend([state["buf"], m, MPI.BYTE], (me + s) % n, TAG_CHAIN)
        MPI.Request.Waitall([recv, send])
    end = MPI.Wtime() - t0
    sub.Barrier()  # every retransmission of the round is over before the counters are read
    after = timeouts_counter()
    return end, (after - before if before is not None and after is not None else None)


def procedure(opts: dict[str, Any]):
    def run(ctx: Context) -> dict[str, Any]:
        nodes = nodes_at_least(ctx, 3, "measure chain")
        n = len(nodes)
        sizes = list(opts["sizes"])
        ctx.progress.grow(len(sizes) * int(opts["min_reps"]))
        with ctx.phase("chain"):
            for m in sizes:
                spent = 0.0
                for rep in range(int(opts["reps"])):
                    if rep >= int(opts["min_reps"]):
                        if spent >= float(opts["budget"]):
                            break
                        ctx.progress.grow(1)
                    spent += _one(ctx, nodes, m, rep)
                    ctx.progress.advance(1, f"chain {m} B round {rep + 1}")
        return {"campaign": ctx.campaign, "nodes": n}

    return run


def _one(ctx: Context, nodes: list[int], m: int, rep: int) -> float:
    """One round (run, or replayed from the database); its time, s."""
    took: list[float] = []

    def replay(stored: list[dict[str, Any]]) -> list[Any]:
        took.append(float(stored[0]["value_s"]))
        return []

    def rows(outs: list[Any]) -> list[dict[str, Any]]:
        ends = [outs[r][0] for r in nodes if outs[r]]
        took.append(max(ends))
        counts = [outs[r][1] for r in nodes if outs[r] and outs[r][1] is not None]
        return [
            {
                "phase": "chain",
                "pattern": "pairwise",
                "quantity": "chain",
                "size_bytes": m,
                "n_ranks": len(nodes),
                "n_msgs": len(nodes) * (len(nodes) - 1),
                "repetition": rep,
                "value_s": max(ends),
                "extra": {"timeouts": sum(counts) if len(counts) == len(nodes) else None},
            }
        ]

    ctx.step(f"chain/m={m}/r={rep}", "chain.round", {"size": m}, rows, replay)
    return took[-1]


MEASUREMENT = Measurement(
    name="chain",
    help="the timeouts of a pairwise exchange whose steps follow each other",
    description="Every node runs the n - 1 steps of a pairwise exchange back to back, as Open MPI's pairwise alltoall does "
    "(in step s node i sends m bytes to node i + s), min-reps to reps rounds at every size (at most budget seconds once min-reps ran), and the "
    "hosts count their TCP retransmission timeouts over each round. Where the fitted network "
    "has ports between switches, `fit` finds the chance with which tcpflow's timeouts there "
    "predict as many (tcp.port_timeouts). One rank per host stands for its node; needs 3 nodes.",
    options=Options,
    validate=validate_options,
    procedure=procedure,
    min_ranks=3,
)
