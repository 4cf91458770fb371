"""``measure wire``: the bytes a message puts on the wire, counted by the hosts' interfaces.

``tcpflow`` charges a message m + h bytes on its route and a bytes on the reverse route
(``network.overhead`` h, ``network.ack`` a; docs/models.md, *Bytes on the wire*). Nothing
timed gives them: a lone one-segment message's time is mostly per-message cost, and
messages posted together share TCP segments. So this benchmark counts them. One rank per
node stands for the node (the first rank of each host; every rank when all run on one host,
where the interfaces count nothing); the other ranks sit the rounds out. Each node rank
reads its host's interface counters (``tx_bytes``, ``tx_packets``; of ``interfaces``, else
of the host's physical interfaces, else of every one but ``lo``: :func:`interfaces`) between barriers before and after k
steps, for k = 20 and k = 100 (after the closing barrier: a send completes once its bytes
are in the socket, and they have left the interface when every receive has ended): the
slope between the two leaves out what the barriers send.
Two rounds:

* ``ring`` at every size of ``sizes``: node i sends m bytes to node i + 1 and waits for
  the m bytes of node i - 1 before its next send, as the steps of a ring collective do
  (N >= 3 nodes, so that no acknowledgement rides on data going back): each node's
  interface sends its data frames and the pure acknowledgements of what it receives;
* ``stream`` at ``stream_size`` (large, below Open MPI's eager limit): node 2i posts k
  messages to node 2i + 1 at once. The senders' bytes per payload byte are the ratio rho
  of frame bytes to the payload rate b that ``fit`` measures from large messages; the
  receivers send only pure acknowledgements, so their bytes per packet are s_a, the
  headers every frame carries.

Samples: ``quantity = round``, ``pattern`` the round, ``size_bytes`` m, ``n_msgs`` k,
``value_s`` the k steps' time, ``src`` the node rank, ``dst`` its peer, and in ``extra``
the counted ``tx_bytes``, ``tx_packets``, the role (``ring``, ``send``, ``ack``), the
``interfaces`` counted and their largest ``mtu``. The fit is :mod:`commodel.fit.wire`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ..errors import CommodelError
from .common import Context, increasing_sizes, kernel
from .efficiency import is_node, node_ranks, node_state
from .unit import Measurement, fill, option

KiB = 1024


@dataclass(frozen=True)
class Options:
    """``measure wire``'s options (the campaign's options in the results database)."""

    sizes: list[int] = option(
        [256, 512, KiB, 2 * KiB, 4 * KiB],
        "sizes of the rings, comma-separated (256,512,1KiB,2KiB,4KiB)",
        kind="sizes",
    )
    stream_size: int = option(
        32 * KiB, "message size of the streams, below the eager limit (32KiB)", kind="size"
    )
    reps: int = option(3, "repetitions of every round (3)", kind="int")
    interfaces: list[str] | None = option(  # None: see `interfaces`
        None,
        "interfaces to count, comma-separated (default: the physical ones in "
        "/sys/class/net, else every one but lo)",
        kind="names",
    )


STEPS = (20, 100)  # the two step counts whose slope is one message
WARMUP = 5  # steps before counting: connections up
NET = "/sys/class/net"


def validate_options(opts: dict[str, Any]) -> dict[str, Any]:
    out = fill(Options, opts, "measure wire")
    out["sizes"] = increasing_sizes("--sizes", out["sizes"])
    if int(out["stream_size"]) < 1:
        raise CommodelError(f"--stream-size must be >= 1 byte, got {out['stream_size']}")
    out["stream_size"] = int(out["stream_size"])
    if int(out["reps"]) < 1:
        raise CommodelError(f"--reps must be >= 1, got {out['reps']}")
    out["reps"] = int(out["reps"])
    ifaces = out["interfaces"]
    if ifaces is not None:
        ifaces = sorted({str(i) for i in ifaces})
        bad = [i for i in ifaces if not i or "/" in i or i.startswith(".")]
        if bad or not ifaces:
            raise CommodelError(f"--interfaces: not interface names: {bad or '(none given)'}")
    out["interfaces"] = ifaces
    return out


def interfaces(chosen: list[str] | None, net: str = NET) -> list[str]:
    """The interfaces to count: ``chosen``; else the host's physical interfaces (those of
    ``net`` whose device is not under ``devices/virtual``), where it has any: a bond, a
    bridge, a VLAN or an ifb on top of them would count their traffic again; else every
    interface but ``lo`` (a network namespace's veth, as on the emulated cluster). None
    where there is no ``net``."""
    if chosen is not None:
        missing = [i for i in chosen if not os.path.isdir(os.path.join(net, i, "statistics"))]
        if missing:
            raise CommodelError(f"--interfaces: no interface {', '.join(missing)} in {net}")
        return list(chosen)
    try:
        names = sorted(
            i
            for i in os.listdir(net)
            if i != "lo" and os.path.isdir(os.path.join(net, i, "statistics"))
        )
    except OSError:
        return []
    physical = [i for i in names if "/virtual/" not in os.path.realpath(os.path.join(net, i)) + "/"]
    return physical or names


def counters(devs: list[str]) -> tuple[int, int]:
    """Bytes and packets the interfaces ``devs`` have sent, summed."""
    nbytes = npackets = 0
    for dev in devs:
        base = os.path.join(NET, dev, "statistics")
        with open(os.path.join(base, "tx_bytes")) as b, open(os.path.join(base, "tx_packets")) as p:
            nbytes += int(b.read())
            npackets += int(p.read())
    return nbytes, npackets


def mtu(devs: list[str]) -> int:
    """The largest MTU of ``devs`` (0: none)."""
    out = 0
    for dev in devs:
        try:
            with open(os.path.join(NET, dev, "mtu")) as fh:
                out = max(out, int(fh.read()))
        except (OSError, ValueError):
            continue
    return out


def _prepare(ctx: Context, params: dict) -> dict:
    """Every rank: the communicator of the node ranks (:func:`node_state`), and on the node
    ranks the interfaces and buffers."""
    k = max(STEPS) if params["pattern"] == "stream" else 1
    state = node_state(ctx, params, params["size"] * k, "wire")
    if is_node(ctx):
        devs = interfaces(params["interfaces"])
        state["devs"], state["mtu"] = devs, mtu(devs)
    return state


def _ring(MPI, sub, m: int, k: int, buf, rbuf) -> None:
    me, n = sub.Get_rank(), sub.Get_size()
    dst, src = (me + 1) % n, (me - 1) % n
    for _ in range(k):
        req = sub.Irecv([rbuf, m, MPI.BYTE], src, 71)
        sub.Send([buf, m, MPI.BYTE], dst, 71)
        req.Wait()


def _stream(MPI, sub, m: int, k: int, buf, rbuf) -> None:
    me, n = sub.Get_rank(), sub.Get_size()
    if me ^ 1 >= n:  # the odd one out of an odd count
        return
    if me % 2 == 0:
        reqs = [sub.Isend([buf[i * m :], m, MPI.BYTE], me + 1, 72) for i in range(k)]
    else:
        reqs = [sub.Irecv([rbuf[i * m :], m, MPI.BYTE], me - 1, 72) for i in range(k)]
    MPI.Request.Waitall(reqs)


@kernel("wire.round", prepare=_prepare, sits_out=lambda ctx, state: not is_node(ctx))
def _round(ctx: Context, state: dict) -> list[tuple[int, int, int, float, int, str]]:
    """On each node rank: (k, tx bytes, tx packets, seconds, mtu, interfaces) for k in
    STEPS."""
    MPI, sub, m = ctx.MPI, state["sub"], state["size"]
    steps = _ring if state["pattern"] == "ring" else _stream
    steps(MPI, sub, m, WARMUP if state["pattern"] == "ring" else 1, state["buf"], state["rbuf"])
    out = []
    for k in STEPS:
        sub.Barrier()
        b0, p0 = counters(state["devs"])
        t0 = MPI.Wtime()
        steps(MPI, sub, m, k, state["buf"], state["rbuf"])
        t1 = MPI.Wtime()
        # a sender's send completes once its bytes are in the socket; they have left the
        # interface when every receive has ended
        sub.Barrier()
        b1, p1 = counters(state["devs"])
        out.append((k, b1 - b0, p1 - p0, t1 - t0, state["mtu"], ",".join(state["devs"])))
    return out


def peer(pattern: str, i: int, n: int) -> int | None:
    """The node index node i sends to (ring, stream sender) or receives from (stream
    receiver); None for the odd node out of a stream."""
    if pattern == "ring":
        return (i + 1) % n
    return None if i ^ 1 >= n else i ^ 1


def role(pattern: str, i: int) -> str:
    return "ring" if pattern == "ring" else ("send" if i % 2 == 0 else "ack")


def rounds(opts: dict[str, Any], n_nodes: int) -> list[tuple[str, int, int]]:
    """(pattern, size, repetition) of every round on ``n_nodes`` nodes: the ring needs 3,
    the stream 2."""
    out = []
    for rep in range(opts["reps"]):
        if n_nodes >= 3:
            out += [("ring", m, rep) for m in opts["sizes"]]
        if n_nodes >= 2:
            out.append(("stream", opts["stream_size"], rep))
    return out


def procedure(opts: dict[str, Any]):
    def run(ctx: Context) -> dict[str, Any]:
        nodes = node_ranks(ctx.hosts)
        todo = rounds(opts, len(nodes))
        ctx.progress.grow(len(todo))
        with ctx.phase("wire"):
            for pattern, m, rep in todo:
                _step(ctx, opts, nodes, pattern, m, rep)
                ctx.progress.advance(1, f"wire {pattern} {m} B")
        return {"campaign": ctx.campaign, "nodes": len(nodes), "rounds": len(todo)}

    return run


def _step(ctx: Context, opts: dict, nodes: list[int], pattern: str, m: int, rep: int) -> None:
    n = len(nodes)

    def rows(outs: list[Any]) -> list[dict[str, Any]]:
        out = []
        for i, r in enumerate(nodes):
            p = peer(pattern, i, n)
            if p is None:
                continue
            for k, nbytes, npackets, secs, mtu_, devs in outs[r]:
                out.append(
                    {
                        "phase": "wire",
                        "pattern": pattern,
                        "quantity": "round",
                        "size_bytes": m,
                        "n_ranks": n,
                        "n_msgs": k,
                        "repetition": rep,
                        "value_s": secs,
                        "src": r,
                        "dst": nodes[p],
                        "hosts": ctx.hosts[r],
                        "extra": {
                            "tx_bytes": nbytes,
                            "tx_packets": npackets,
                            "role": role(pattern, i),
                            "mtu": mtu_,
                            "interfaces": devs,
                        },
                    }
                )
        return out

    params = {"pattern": pattern, "size": m, "interfaces": opts["interfaces"]}
    ctx.step(f"wire/{pattern}/m={m}/r={rep}", "wire.round", params, rows, replay=lambda _: [])


MEASUREMENT = Measurement(
    name="wire",
    help="the bytes a message puts on the wire, counted by the interfaces (for tcpflow)",
    description="Rings of lone messages (node i sends to i+1 and waits for the message "
    "of i-1 before its next send, as a ring collective's steps do) and streams of "
    "long messages, each node's interface counters (tx_bytes, tx_packets) read around "
    "them. `fit` turns them into network.overhead h (a message's bytes beyond m on its "
    "route) and network.ack a (its acknowledgements' bytes on the reverse route), in "
    "units of the fitted payload rate b. One rank per host stands for its node; the "
    "ring needs 3 nodes.",
    options=Options,
    validate=validate_options,
    procedure=procedure,
)
