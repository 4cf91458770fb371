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

Before them every node sends one byte to every other once, untimed (``phase = warmup``):
on two-rack-16 the first flow of the first round had taken 3.9 ms against 0.2-0.5 ms for
every later one. Each repetition starts from a synchronized barrier; every flow is timed
from there to its receive's end. Ranks without a flow in a round sit it out (outside
real-time scheduling).

**Ranks that share a machine** (an emulated cluster: one kernel ``boot_id``) share its C
cores, and the CPU work of more than C busy ranks slows down. Below Open MPI's TCP eager
limit (64 KiB) the platform's ``cpu`` section charges that on its own, so that the tables
hold TCP's loss only there no round runs more of a machine's ranks at once than it has
cores (at least one pair): the pairs of ``oneway`` and ``exchange`` run in groups, one
after the other (on 2 cores, one pair at a time; the samples' ``extra`` names the group),
and the ``duplex`` ring takes the first nodes only, as many as the cores but at least 3.
(On two-rack-8, 8 ranks on 2 cores, the exchange of 4 KiB took twice the one-way time
with every pair at once, e_x = 0.51-0.54, against 0.90-0.95 in groups:
study/tcpflow-history.md, *What e is*.) From the eager limit on every pair runs at
once, as on machines of their own: there the ``cpu`` section charges no more than its
last eager size, and the rendezvous of an exchange waits for a peer that has no core
(e_x(64 KiB) 0.58-0.70 with 4 or 8 ranks on 2 cores, 0.90-0.94 in groups), which these
rounds are then the only part of the platform to measure. ``alltoall`` and ``fanout`` run
every node at once.

Repetitions continue until the 95% confidence
interval of every flow's mean is within ``ci`` of it, or ``max_reps``, or (``budget`` > 0,
from ``min_reps`` on) until the round's repetitions have taken ``budget`` seconds together:
on slow links the large all-to-all rounds took most of ``calibrate``'s time. With
``round_limit`` > 0, no all-to-all size is measured (nor any larger one) whose rounds
would take longer than that: the mean round of the size below, in proportion to the size
(``fit`` holds e_f at the largest size measured beyond it). The flows are the
same kernel as ``measure concurrent`` (samples with ``quantity = flow``).

The fit (:mod:`commodel.fit.efficiency`) turns the flow times into the efficiency tables of
the ``tcpflow`` model: e_x(m) = the later of two one-way flows of a repetition / the later
flow of an exchanging pair, e_d(m) = one-way flow time / ring flow time, means over flows
and repetitions. The ``alltoall`` rounds give the fan-in table e_f(m), fitted through the
model itself once the platform's other sections are known (:mod:`commodel.fit.fanin`).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from ..errors import CommodelError
from ..openmpi import EAGER_LIMIT
from .common import Context, increasing_sizes, kernel, seconds
from .concurrent import ci_ok, flows_step
from .tcp import this_machine
from .unit import Measurement, fill, option

KiB = 1024
MiB = 1024 * KiB


@dataclass(frozen=True)
class Options:
    """``measure efficiency``'s options (the campaign's options in the results database)."""

    sizes: list[int] = option(
        [4 * KiB, 16 * KiB, 64 * KiB, 256 * KiB, 1 * MiB],
        "message sizes, comma-separated (4KiB,16KiB,64KiB,256KiB,1MiB)",
        kind="sizes",
    )
    fanout_sizes: list[int] | None = option(  # None: default_fanout_sizes
        None,
        "sizes of the fan-out rounds (1KiB doubling up to the largest --sizes, at most 256KiB)",
        kind="sizes",
    )
    alltoall_sizes: list[int] | None = option(  # None: default_alltoall_sizes
        None,
        "sizes of the all-to-all rounds (4KiB doubling up to the largest --sizes)",
        kind="sizes",
    )
    min_reps: int = option(5, "repetitions per round and size before the CI test (5)", kind="int")
    max_reps: int = option(15, "repetition cap per round and size (15)", kind="int")
    ci: float = option(0.05)
    budget: float = option(
        0.0,
        "seconds: a round and size stops at --min-reps or later once its repetitions have "
        "taken this long together, converged or not (0: no budget)",
        kind="float",
    )
    round_limit: float = option(
        0.0,
        "seconds: no all-to-all size is measured whose rounds would take longer than this, "
        "from the mean round of the size below in proportion to the size (0: no limit)",
        kind="float",
    )


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
    out = fill(Options, opts, "measure efficiency")
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
    out["budget"] = seconds("--budget", out["budget"])
    out["round_limit"] = seconds("--round-limit", out["round_limit"])
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


def nodes_at_least(ctx: Context, least: int, command: str) -> list[int]:
    """The node ranks (:func:`node_ranks`), or an error naming ``command`` where there are
    fewer than ``least`` nodes."""
    nodes = node_ranks(ctx.hosts)
    if len(nodes) < least:
        raise CommodelError(f"{command} needs at least {least} nodes (hosts)")
    return nodes


def is_node(ctx: Context) -> bool:
    """Whether this rank stands for its node (:func:`node_ranks`)."""
    return ctx.rank in node_ranks(ctx.hosts)


def node_state(ctx: Context, params: dict, size: int, tag: str) -> dict:
    """A kernel's state on every rank: ``params`` and ``sub``, the communicator of the node
    ranks (:meth:`Context.split`); on the node ranks also ``buf`` and ``rbuf`` of ``size``
    bytes (named ``TAG.send``, ``TAG.recv``). The kernels of rounds between nodes (topology,
    wire, ports) prepare with it and let the other ranks sit out (``not is_node``)."""
    state = dict(params, sub=ctx.split(tuple(node_ranks(ctx.hosts))))
    if is_node(ctx):
        state["buf"] = ctx.buffer(size, f"{tag}.send")
        state["rbuf"] = ctx.buffer(size, f"{tag}.recv")
    return state


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


Flow = tuple[int, int]


@kernel("efficiency.machine")
def _machine(ctx: Context, params: dict) -> tuple[str, list[int]]:
    """The rank's machine: its kernel's boot_id and the cores it may run on."""
    return this_machine()


def machines(info: list[tuple[str, list[int]]]) -> tuple[list[str], dict[str, int]]:
    """Per rank its machine, and per machine its cores (the union of its ranks'
    affinities), from every rank's (boot_id, cores). A rank without a boot_id is a machine
    of its own."""
    names = [boot or f"rank {r}" for r, (boot, _) in enumerate(info)]
    union: dict[str, set[int]] = {}
    for name, (_, cores) in zip(names, info):
        union.setdefault(name, set()).update(cores)
    return names, {name: max(1, len(c)) for name, c in union.items()}


def _fits(ranks: set[int], machine: list[str], cores: dict[str, int], least: int) -> bool:
    count: dict[str, int] = {}
    for r in ranks:
        count[machine[r]] = count.get(machine[r], 0) + 1
    return all(n <= max(least, cores[m]) for m, n in count.items())


def groups(units: list[list[Flow]], machine: list[str], cores: dict[str, int]) -> list[list[Flow]]:
    """``units`` (the flows of a pair) packed in order into groups that run no more of a
    machine's ranks at once than it has cores (at least one unit a group)."""
    out: list[list[Flow]] = []
    ranks: set[int] = set()
    for unit in units:
        mine = {r for f in unit for r in f}
        if out and _fits(ranks | mine, machine, cores, 2):
            out[-1] += unit
            ranks |= mine
        else:
            out.append(list(unit))
            ranks = set(mine)
    return out


def ring_nodes(nodes: list[int], machine: list[str], cores: dict[str, int]) -> list[int]:
    """The nodes of the ``duplex`` ring: the longest leading run of ``nodes`` that runs no
    more of a machine's ranks than it has cores, and at least 3 (all of them when fewer)."""
    k = min(3, len(nodes))
    while k < len(nodes) and _fits(set(nodes[: k + 1]), machine, cores, 3):
        k += 1
    return nodes[:k]


def plan(
    opts: dict[str, Any], nodes: list[int], machine: list[str], cores: dict[str, int]
) -> list[tuple[str, int, int | None, list[Flow]]]:
    """(pattern, size, group, flows) of every round; group is None where a pattern runs in
    one group. Below the eager limit the pairs of a machine's ranks run in groups of its
    cores (module docstring), from it on every pair at once."""
    pairs = flows("oneway", nodes)
    at_once = {
        "oneway": [pairs],
        "exchange": [flows("exchange", nodes)],
        "duplex": [f] if (f := flows("duplex", nodes)) else [],
    }
    grouped = {
        "oneway": groups([[f] for f in pairs], machine, cores),
        "exchange": groups([[(a, b), (b, a)] for a, b in pairs], machine, cores),
        "duplex": [f] if (f := flows("duplex", ring_nodes(nodes, machine, cores))) else [],
    }
    rounds = [
        (pattern, size, g if len(by[pattern]) > 1 else None, fl)
        for size in opts["sizes"]
        for by in [grouped if size < EAGER_LIMIT else at_once]
        for pattern in PATTERNS
        for g, fl in enumerate(by[pattern])
    ]
    a2a = flows("alltoall", nodes)
    rounds += [("alltoall", size, None, a2a) for size in opts["alltoall_sizes"] if a2a]
    fan = flows("fanout", nodes)
    rounds += [("fanout", size, None, fan) for size in opts["fanout_sizes"] if fan]
    return rounds


def _machine_step(ctx: Context) -> list[tuple[str, list[int]]]:
    """Every rank's (boot_id, cores), stored as one ``machine`` sample a rank."""

    def rows(outs):
        return [
            {"phase": "efficiency", "quantity": "machine", "value_s": 0.0, "src": r,
             "hosts": ctx.hosts[r], "extra": {"boot_id": boot, "cpus": list(c)}}
            for r, (boot, c) in enumerate(outs)
        ]  # fmt: skip

    def replay(stored):
        return [
            (r["extra"]["boot_id"], r["extra"]["cpus"])
            for r in sorted(stored, key=lambda r: r["src"])
        ]

    return ctx.step(
        "efficiency/machine", "efficiency.machine", {}, rows=rows, replay=replay
    ).per_rank


def procedure(opts: dict[str, Any]):
    def run(ctx: Context) -> dict[str, Any]:
        nodes = nodes_at_least(ctx, 2, "measure efficiency")
        machine, cores = machines(_machine_step(ctx))
        rounds = plan(opts, nodes, machine, cores)
        ctx.progress.grow(len(rounds))
        # untimed: every node pair's first message (phase "warmup", which fit leaves out)
        warm = flows("alltoall", nodes) or flows("exchange", nodes)
        flows_step(ctx, "efficiency/warmup", "warmup", "warmup", 1, warm, 1, 0, len(warm))
        limit = float(opts.get("round_limit") or 0.0)
        last: tuple[int, float] | None = None  # the last all-to-all size and its mean round
        with ctx.phase("efficiency"):
            for pattern, size, group, fl in rounds:
                if pattern == "alltoall" and too_long(last, size, limit):
                    ctx.progress.advance(1, f"efficiency {pattern} {size} B skipped")
                    continue
                spans = _round(ctx, opts, pattern, size, fl, group)
                if pattern == "alltoall":
                    last = (size, statistics.mean(spans))
                ctx.progress.advance(1, f"efficiency {pattern} {size} B")
        return {"campaign": ctx.campaign, "nodes": len(nodes)}

    return run


def too_long(last: tuple[int, float] | None, size: int, limit: float) -> bool:
    """Whether an all-to-all round of ``size`` bytes would take longer than ``limit``
    seconds (0: no limit), predicted in proportion to the size from ``last``, the size below
    and its mean round time (None: nothing measured yet, so measure)."""
    return limit > 0 and last is not None and last[1] * size / last[0] > limit


def _round(
    ctx: Context,
    opts: dict[str, Any],
    pattern: str,
    size: int,
    fl: list[Flow],
    group: int | None = None,
) -> list[float]:
    """Repeat one round until every flow's mean has converged; the round times (the last
    flow's end), one per repetition."""
    per_flow: dict[int, list[float]] = {i: [] for i in range(len(fl))}
    spans: list[float] = []
    batch = 0
    while True:
        reps = int(opts["min_reps"]) if batch == 0 else 1
        first = len(spans)

        g = "" if group is None else f"/g={group}"
        res = flows_step(
            ctx, f"efficiency/{pattern}/m={size}{g}/b={batch}", "efficiency", pattern, size,
            fl, reps, first, n_msgs=len(fl), group=group,
        )  # fmt: skip
        by_rep: dict[int, float] = {}
        for rank_out in res.per_rank:
            for r, rep in enumerate(rank_out or []):
                for i, t in rep:
                    per_flow[i].append(t)
                    by_rep[r] = max(by_rep.get(r, 0.0), t)
        spans += [by_rep[r] for r in sorted(by_rep)]
        batch += 1
        if enough(opts, spans, per_flow):
            return spans


def enough(opts: dict[str, Any], spans: list[float], per_flow: dict[int, list[float]]) -> bool:
    """Whether a round stops: ``max_reps`` repetitions, or from ``min_reps`` on every flow's
    mean within its confidence interval ``ci``, or (``budget`` > 0) the repetitions' round
    times ``spans`` summing to the budget."""
    budget = float(opts.get("budget") or 0.0)
    if len(spans) >= int(opts["max_reps"]):
        return True
    if len(spans) < int(opts["min_reps"]):
        return False
    if budget > 0.0 and sum(spans) >= budget:
        return True
    return all(ci_ok(v, float(opts["ci"])) for v in per_flow.values())


MEASUREMENT = Measurement(
    name="efficiency",
    help="TCP's efficiency when traffic runs both ways (for the tcpflow model)",
    description="Rounds of one message per node pair, timed from a synchronized start: "
    "one way (n0->n1, n2->n3, ...), exchanges (n0<->n1, ...) and a ring (n_i -> "
    "n_i+1: every node sends and receives with different peers), at each size; and "
    "all-to-all rounds (every node sends to every other at once, as a linear alltoall) "
    "and fan-outs (n0 posts one message to each of n1, n2, n3 at once). `fit` turns "
    "them into tcp.efficiency (e = one-way time / both-ways time; with the plogp and "
    "network sections, fanin: what the model lacks on the all-to-all rounds) and "
    "tcp.fifo_limit (the largest size a node's NIC sends in posting order). One rank "
    "per host stands for its node.",
    options=Options,
    validate=validate_options,
    procedure=procedure,
)
