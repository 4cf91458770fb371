"""``measure ports``: how much a switch port holds, from the timeouts of bursts into it.

A port that overflows drops the tail of a message; nothing behind it tells the receiver, and
the sender waits its retransmission timeout (RTO_min, 200 ms on Linux). So one burst of k
flows of m bytes each into one port, repeated with m growing, shows where the port starts to
drop: the rounds take RTO_min longer, and the senders' hosts count a ``TCPTimeouts``
(``/proc/net/netstat``). The fit (:mod:`commodel.fit.ports`) writes ``tcp.timeouts``, the fan-in and the size
from which bursts into a node time out, and finds the buffer with which ``tcpflow``'s
tail-drop rule predicts the timeouts of these rounds. One rank per node stands
for the node; the other ranks sit the rounds out. Probes (docs/measurement.md, *ports*):

* ``host``: every other node sends m bytes to node 0 at once, into the switch port toward
  node 0 (height 1);
* ``alltoall``: every node sends m bytes to every other at once, as a linear alltoall
  (every port toward a node takes n - 1 senders, each of them sending n - 1 messages);
* ``uplink``: where the ``topology`` campaign of the same database found racks, the nodes of
  the largest rack send m bytes each to distinct nodes outside it, as many as there are
  (or all but one, the other way, when the rack holds more than half of the nodes), into
  the port on that rack's uplink (height 2).

m doubles from ``min_size`` to ``max_size``; a probe stops growing m once ``stop`` sizes in
a row had a timeout in every repetition. Samples: ``quantity = burst`` (``value_s`` the
round's time, the last flow's end), ``size_bytes`` m, ``pattern`` the probe, ``extra``:
``flows`` (node index pairs) and ``timeouts`` (the senders' hosts' TCPTimeouts during the
round, or null where the counter cannot be read).
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
TAG_BURST = 91
NETSTAT = "/proc/net/netstat"


@dataclass(frozen=True)
class Options:
    """``measure ports``' options (the campaign's options in the results database)."""

    min_size: int = option(4 * KiB, "smallest message of a burst (4KiB)", kind="size")
    max_size: int = option(256 * KiB, "largest message of a burst (256KiB)", kind="size")
    reps: int = option(3, "rounds of every probe and size (3)", kind="int")
    stop: int = option(
        2, "stop a probe after this many sizes in a row timed out every round (2)", kind="int"
    )


def validate_options(opts: dict[str, Any]) -> dict[str, Any]:
    out = fill(Options, opts, "measure ports")
    for key in ("min_size", "max_size", "reps", "stop"):
        if int(out[key]) < 1:
            raise CommodelError(f"--{key.replace('_', '-')} must be >= 1, got {out[key]}")
        out[key] = int(out[key])
    if out["max_size"] < out["min_size"]:
        raise CommodelError(
            f"--max-size ({out['max_size']}) must be at least --min-size ({out['min_size']})"
        )
    return out


def timeouts_counter(path: str = NETSTAT) -> int | None:
    """This host's TcpExt TCPTimeouts (None where it cannot be read)."""
    try:
        with open(path, encoding="ascii") as fh:
            lines = [line.split() for line in fh if line.startswith("TcpExt:")]
    except OSError:
        return None
    if len(lines) >= 2 and "TCPTimeouts" in lines[0]:
        return int(lines[1][lines[0].index("TCPTimeouts")])
    return None


def _prepare(ctx: Context, params: dict) -> dict:
    return node_state(ctx, params, int(params["size"]), "ports")


@kernel("ports.burst", prepare=_prepare, sits_out=lambda ctx, state: not is_node(ctx))
def _burst(ctx: Context, state: dict) -> tuple[float | None, int | None]:
    """One round: (this node's last receive's end from the common start, or None; the
    TCPTimeouts this node's host counted during the round)."""
    MPI, sub, m = ctx.MPI, state["sub"], int(state["size"])
    me = sub.Get_rank()
    flows = [tuple(f) for f in state["flows"]]
    reqs = [sub.Irecv([state["rbuf"], m, MPI.BYTE], s, TAG_BURST) for s, d in flows if d == me]
    before = timeouts_counter()
    sub.Barrier()
    t0 = MPI.Wtime()
    sends = [sub.Isend([state["buf"], m, MPI.BYTE], d, TAG_BURST) for s, d in flows if s == me]
    MPI.Request.Waitall(reqs)
    end = MPI.Wtime() - t0 if reqs else None
    MPI.Request.Waitall(sends)
    sub.Barrier()  # every retransmission of the round is over before the counters are read
    after = timeouts_counter()
    return end, (after - before if before is not None and after is not None else None)


def probes(n: int, racks: list[list[int]] | None) -> dict[str, list[tuple[int, int]]]:
    """The flows (node indices) of each probe on ``n`` nodes with the ``topology`` fit's
    racks (None: one switch)."""
    out = {
        "host": [(i, 0) for i in range(1, n)],
        # every node to every other at once, posted as Open MPI's linear alltoall posts them
        "alltoall": [(i, (i - k) % n) for k in range(1, n) for i in range(n)],
    }
    if racks and len(racks) > 1:
        big = max(racks, key=len)
        outside = [j for j in range(n) if j not in big]
        if len(big) <= len(outside):
            out["uplink"] = list(zip(big, outside))
        else:  # into the rack: its downlink port, the same height
            out["uplink"] = list(zip(outside, big))
    return out


def topology_racks(ctx: Context, n: int) -> list[list[int]] | None:
    """The racks of the database's latest complete ``topology`` campaign of ``n`` nodes."""
    from ..topology_inference import infer, rounds_of

    camps = [
        c
        for c in ctx.db.campaigns()
        if c.benchmark == "topology" and c.status == "complete" and c.ranks == ctx.size
    ]
    if not camps:
        return None
    samples = ctx.db.samples(camps[-1].id)
    found = infer(rounds_of(samples, n, int(camps[-1].options["size"])))
    return found.levels[0].groups if found.levels else None


def procedure(opts: dict[str, Any]):
    def run(ctx: Context) -> dict[str, Any]:
        nodes = nodes_at_least(ctx, 3, "measure ports")
        n = len(nodes)
        racks = topology_racks(ctx, n)
        plan = probes(n, racks)
        sizes = []
        m = int(opts["min_size"])
        while m <= int(opts["max_size"]):
            sizes.append(m)
            m *= 2
        ctx.progress.grow(len(plan) * len(sizes))
        with ctx.phase("ports"):
            for probe, flows in plan.items():
                streak = 0
                for m in sizes:
                    hits = _probe_size(ctx, opts, nodes, probe, flows, m)
                    ctx.progress.advance(1, f"ports {probe} {m} B: {hits} timeouts")
                    streak = streak + 1 if hits == int(opts["reps"]) else 0
                    if streak >= int(opts["stop"]):
                        break
        return {"campaign": ctx.campaign, "nodes": n, "probes": sorted(plan)}

    return run


def _probe_size(ctx, opts, nodes, probe, flows, m) -> int:
    """Measure ``reps`` rounds of one probe at m bytes; the number with a timeout."""
    hits = 0
    for rep in range(int(opts["reps"])):
        got: list[int] = []

        def rows(outs: list[Any], rep=rep, got=got) -> list[dict[str, Any]]:
            ends = [outs[r][0] for r in nodes if outs[r] and outs[r][0] is not None]
            counts = [outs[r][1] for r in nodes if outs[r] and outs[r][1] is not None]
            timeouts = sum(counts) if len(counts) == len(nodes) else None
            got.append(1 if timeouts else 0)
            return [
                {
                    "phase": "ports",
                    "pattern": probe,
                    "quantity": "burst",
                    "size_bytes": m,
                    "n_ranks": len(nodes),
                    "n_msgs": len(flows),
                    "repetition": rep,
                    "value_s": max(ends),
                    "extra": {"flows": json.dumps(flows), "timeouts": timeouts},
                }
            ]

        def replay(stored: list[dict[str, Any]], got=got) -> list[Any]:
            extra = stored[0]["extra"]
            extra = extra if isinstance(extra, dict) else json.loads(extra or "{}")
            got.append(1 if extra.get("timeouts") else 0)
            return []

        params = {"flows": flows, "size": m}
        ctx.step(f"buffer/{probe}/m={m}/r={rep}", "ports.burst", params, rows, replay)
        hits += got[-1]
    return hits


MEASUREMENT = Measurement(
    name="ports",
    help="the switch ports' buffers, from the timeouts of bursts into one port",
    description="Every other node sends m bytes to node 0 at once (the port toward a node), "
    "every node to every other at once (a linear alltoall), "
    "and, where the database's topology campaign found racks, the nodes of the largest rack "
    "to nodes outside it (the port on its uplink), m doubling; the senders' hosts count "
    "their TCP retransmission timeouts. `fit` finds the buffers with which tcpflow's "
    "tail-drop rule predicts the rounds that timed out (network.buffer, tcp.rto_rule "
    "buffer). One rank per host stands for its node; needs 3 nodes.",
    options=Options,
    validate=validate_options,
    procedure=procedure,
    min_ranks=3,
)
