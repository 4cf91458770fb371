"""The network's shape and rates, inferred from rounds of concurrent flows between the nodes.

Shared by ``measure topology`` (which picks its confirmation rounds from what
:func:`explore` proposes while it measures) and its fit (:mod:`commodel.fit.topology`, which
writes the ``network`` section of what :func:`infer` finds), so that the run imports
nothing of ``fit/``.

What ``measure topology`` gives (per node pair, all measured from the hosts alone):

* ``solo``: the time of one flow of S bytes with the network otherwise idle, for the flows
  i -> i+1 (mod N): the NIC rate b = S / t where the fastest of them run;
* ``shift`` rounds s = 1..N-1: every node i sends S bytes to i+s at once (a permutation:
  each NIC carries one flow each way), so every ordered pair runs once per repetition, and
  a flow is slowed only by the links between switches that the round loads beyond their
  rate;
* ``latency``: the shortest round trip of one full frame for every pair (store-and-forward
  switches add a frame time a hop; token buckets let it through).

The model (the one ``maxmin`` and ``tcpflow`` share for rates): nodes hang on switches in a
tree; each group of nodes under a switch has an uplink of capacity B (per direction), the
same for every group of one level. A flow i -> j crosses the NICs of i and j and the uplinks
of every group that holds one of them but not the other. Rates are max-min fair; flows end
when their S bytes are through, and the others speed up (:func:`fluid_times`).

The fit (:func:`infer`): candidate groupings come from the hierarchical clusterings of the
pairs' slowdowns and of their latencies; each is scored by how well the model, with the
uplink capacity that fits best, predicts every flow of every round (squared log error), and
the grouping kept is the one that explains the rounds better than no groups at all (a
crossbar) by :data:`GAIN` or more. A second level (groups of groups, or groups within the
groups) is added the same way. The report says what each candidate scored.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import CommodelError

# A grouping is kept when its loss is at most this share of the simpler model's.
GAIN = 0.6
# local_search takes a move that lowers the loss by this share (one that adds a group: the
# second), so that it follows the network, not the noise.
MOVE_GAIN, MOVE_GAIN_NEW = 0.08, 0.15
# Groupings whose losses are within this factor of the lowest count as tied: the one with
# the fewest groups is taken.
TIE = 1.1
# An uplink is a bottleneck when it is narrower than this share of the most its group can
# send (the group's NICs, or the NICs outside it, whichever is fewer). On 5-host serialize
# clusters where no link could slow a round, groupings fitted with uplinks at 0.81-0.91 of
# that (not diagnosed); the true bottlenecks of the 42 dev draws fitted at 0.76 or less.
BOTTLENECK = 0.8


@dataclass(frozen=True)
class Round:
    """Flows (src, dst) of S bytes started together, and the time each took (s)."""

    flows: tuple[tuple[int, int], ...]
    times: tuple[float, ...]


@dataclass(frozen=True)
class Rounds:
    """The measurements of one ``measure topology`` campaign (times in seconds)."""

    nodes: int
    size: int  # S, bytes per flow
    solo: Sequence[float]  # per node i: the flow i -> i+1 alone
    rounds: Sequence[Round]  # the shift rounds, then any confirmation rounds
    latency: Sequence[Sequence[float]] | None = None  # [i][j]: shortest round trip, s

    def with_rounds(self, more: Sequence[Round]) -> Rounds:
        return Rounds(self.nodes, self.size, self.solo, [*self.rounds, *more], self.latency)


@dataclass
class Level:
    """One level of groups: which group each node is in, and the groups' uplink capacity."""

    group: tuple[int, ...]  # per node
    capacity: float  # B/s per direction

    @property
    def groups(self) -> list[list[int]]:
        out: dict[int, list[int]] = {}
        for node, g in enumerate(self.group):
            out.setdefault(g, []).append(node)
        return sorted(out.values())


@dataclass
class Inference:
    """What :func:`infer` found: the NIC rate, the levels (finest first), and the scores."""

    nodes: int
    nic: float  # B/s
    overhead_s: float  # a solo flow's time beyond S / nic
    levels: list[Level]
    loss: float
    crossbar_loss: float
    notes: list[str] = field(default_factory=list)
    proposed: list[Level] = field(default_factory=list)


def canonical(group: Sequence[int]) -> tuple[int, ...]:
    """Group labels renumbered in order of first appearance (a partition's one name)."""
    seen: dict[int, int] = {}
    return tuple(seen.setdefault(g, len(seen)) for g in group)


def fluid_times(
    flows: Sequence[tuple[int, int]],
    size: float,
    nic: float,
    levels: Sequence[Level],
) -> list[float]:
    """Finish times of ``flows`` (src, dst), each of ``size`` bytes, all started at 0, under
    max-min sharing of the NICs (``nic`` B/s each way) and the levels' uplinks."""
    routes: list[list[tuple]] = []
    for src, dst in flows:
        res: list[tuple] = [("up", src), ("down", dst)]
        for k, lv in enumerate(levels):
            a, b = lv.group[src], lv.group[dst]
            if a != b:
                res += [("gup", k, a), ("gdown", k, b)]
        routes.append(res)

    def cap(r: tuple) -> float:
        return nic if r[0] in ("up", "down") else levels[r[1]].capacity

    left = [float(size)] * len(flows)
    done = [math.inf] * len(flows)
    active = set(range(len(flows)))
    now = 0.0
    while active:
        rate = _maxmin(active, routes, cap)
        step = min(left[f] / rate[f] for f in active)
        now += step
        for f in list(active):
            left[f] -= rate[f] * step
            if left[f] <= size * 1e-9:
                done[f] = now
                active.discard(f)
    return done


def _maxmin(active: set[int], routes: list[list[tuple]], cap) -> dict[int, float]:
    """Progressive filling: every flow weight 1."""
    rate: dict[int, float] = {}
    remaining = {}
    users: dict[tuple, set[int]] = {}
    for f in active:
        for r in routes[f]:
            users.setdefault(r, set()).add(f)
            remaining[r] = cap(r)
    unfixed = set(active)
    while unfixed:
        share = {r: remaining[r] / len(u & unfixed) for r, u in users.items() if u & unfixed}
        r_min = min(share, key=share.get)
        level = share[r_min]
        for f in list(users[r_min] & unfixed):
            rate[f] = level
            unfixed.discard(f)
            for r in routes[f]:
                remaining[r] -= level
    return rate


def nic_rate(rounds: Rounds) -> float:
    """b = S / t over the fastest solo flows (those within 10% of the fastest; a solo flow
    across a link narrower than the NICs is slower and left out)."""
    timed = [t for t in rounds.solo if t > 0]
    if not timed:
        raise CommodelError("the topology campaign has no solo flow between two nodes")
    fastest = min(timed)
    fast = sorted(t for t in timed if t <= 1.1 * fastest)
    return rounds.size / fast[len(fast) // 2]


def shift_flows(nodes: int, s: int) -> list[tuple[int, int]]:
    return [(i, (i + s) % nodes) for i in range(nodes)]


def loss(rounds: Rounds, nic: float, levels: Sequence[Level]) -> float:
    """Sum over every flow of every round, the solo flows included, of (log measured - log
    predicted)^2."""
    n = rounds.nodes
    solo = [Round(((i, (i + 1) % n),), (t,)) for i, t in enumerate(rounds.solo) if t > 0]
    total = 0.0
    for rd in [*solo, *rounds.rounds]:
        pred = fluid_times(rd.flows, rounds.size, nic, levels)
        total += sum(math.log(t / p) ** 2 for t, p in zip(rd.times, pred) if t > 0)
    return total


def most_load(level_groups: list[list[int]], nodes: int) -> int:
    """The most flows one group's uplink can carry in a round where every NIC carries one
    flow each way: the group's nodes, or those outside it, whichever are fewer."""
    return max(min(len(g), nodes - len(g)) for g in level_groups)


def fit_capacity(
    rounds: Rounds, nic: float, group: tuple[int, ...], others: Sequence[Level], where: int
) -> tuple[float, float]:
    """The capacity of a level of groups ``group`` (inserted at index ``where`` among
    ``others``) that minimises the loss, and that loss: a grid over log B, then a finer one."""
    groups = Level(group, 0.0).groups
    high = max(1, most_load(groups, rounds.nodes)) * nic

    def at(b: float) -> float:
        lv = list(others)
        lv.insert(where, Level(group, b))
        return loss(rounds, nic, lv)

    lo, hi = math.log(0.1 * nic), math.log(high)
    best = (math.inf, high)
    for _ in range(2):
        grid = [lo + (hi - lo) * k / 15 for k in range(16)]
        scored = [(at(math.exp(x)), x) for x in grid]
        value, x = min(scored)
        if value < best[0]:
            best = (value, math.exp(x))
        step = (hi - lo) / 15
        lo, hi = x - step, x + step
    return best[1], best[0]


def _average_linkage(dist: Sequence[Sequence[float]]) -> list[tuple[int, ...]]:
    """Every partition of the agglomerative clustering with average linkage, from N groups
    down to 2."""
    n = len(dist)
    clusters = [[i] for i in range(n)]
    out = []
    while len(clusters) > 2:
        best = None
        for a in range(len(clusters)):
            for b in range(a + 1, len(clusters)):
                d = sum(dist[i][j] for i in clusters[a] for j in clusters[b])
                d /= len(clusters[a]) * len(clusters[b])
                if best is None or d < best[0]:
                    best = (d, a, b)
        _, a, b = best
        clusters[a] = clusters[a] + clusters[b]
        del clusters[b]
        group = [0] * n
        for k, c in enumerate(clusters):
            for i in c:
                group[i] = k
        out.append(canonical(group))
    return out


def candidates(rounds: Rounds, nic: float) -> list[tuple[int, ...]]:
    """Groupings worth scoring: the clusterings of the pairs' slowdowns and latencies."""
    n = rounds.nodes
    t_nic = rounds.size / nic
    slow = [[0.0] * n for _ in range(n)]
    for rd in rounds.rounds:
        for (i, j), t in zip(rd.flows, rd.times):
            slow[i][j] = max(slow[i][j], math.log(max(t / t_nic, 1.0)))
    sym = [[max(slow[i][j], slow[j][i]) for j in range(n)] for i in range(n)]
    found = _average_linkage(sym)
    if rounds.latency is not None:
        found += _average_linkage(rounds.latency)
    return list(dict.fromkeys(p for p in found if len(set(p)) >= 2))


def _refines(fine: tuple[int, ...], coarse: tuple[int, ...]) -> bool:
    """Every group of ``fine`` lies within one group of ``coarse`` (and they differ)."""
    owner: dict[int, int] = {}
    for f, c in zip(fine, coarse):
        if owner.setdefault(f, c) != c:
            return False
    return len(set(fine)) > len(set(coarse))


def local_search(
    rounds: Rounds,
    nic: float,
    group: tuple[int, ...],
    cap: float,
    others: Sequence[Level],
    where: int,
    passes: int = 12,
) -> tuple[tuple[int, ...], float, float]:
    """Improve a grouping one node at a time: move a node to another group (or alone), or
    swap two nodes of different groups, whichever lowers the loss most with the level's
    capacity held, then fit the capacity again; until no move helps. Returns (grouping,
    capacity, loss)."""

    def at(g: tuple[int, ...], b: float) -> float:
        lv = list(others)
        lv.insert(where, Level(g, b))
        return loss(rounds, nic, lv)

    n = len(group)
    current = at(group, cap)
    for _ in range(passes):
        labels = sorted(set(group))
        fresh = max(labels) + 1
        tried: set[tuple[int, ...]] = set()
        best = (current, group)
        for i in range(n):
            for g in [*labels, fresh]:
                if g != group[i]:
                    tried.add(canonical(group[:i] + (g,) + group[i + 1 :]))
            for j in range(i + 1, n):
                if group[i] != group[j]:
                    swapped = list(group)
                    swapped[i], swapped[j] = group[j], group[i]
                    tried.add(canonical(swapped))
        for g in tried:
            value = at(g, cap)
            # a move must explain clearly more; one that adds a group, more still
            need = MOVE_GAIN_NEW if len(set(g)) > len(labels) else MOVE_GAIN
            if value < current * (1 - need) and value < best[0]:
                best = (value, g)
        if best[1] == group:
            break
        group = best[1]
        cap, current = fit_capacity(rounds, nic, group, others, where)
    return group, cap, current


def _merge_singletons(fine: tuple[int, ...], coarse: tuple[int, ...]) -> tuple[int, ...]:
    """The finer level with the nodes that are alone in their group joined, per group of
    the coarser level (a switch with one node under it is that node's own link; two such
    nodes of one parent are more likely one switch's than two)."""
    size: dict[int, int] = {}
    for g in fine:
        size[g] = size.get(g, 0) + 1
    out = list(fine)
    joined: dict[int, int] = {}
    for i, g in enumerate(fine):
        if (
            size[g] == 1
            and sum(1 for j, h in enumerate(fine) if size[h] == 1 and coarse[j] == coarse[i]) > 1
        ):
            out[i] = joined.setdefault(coarse[i], g)
    return canonical(out)


def _parsimonious(scored: list[tuple[float, tuple[int, ...], float]]) -> tuple | None:
    """Of groupings scored (loss, grouping, capacity), the one with the fewest groups among
    those within :data:`TIE` of the lowest loss."""
    if not scored:
        return None
    low = min(v for v, _, _ in scored)
    near = [x for x in scored if x[0] <= TIE * low + 1e-12]
    return min(near, key=lambda x: (len(set(x[1])), x[0]))


def infer(rounds: Rounds) -> Inference:
    """The levels of groups that explain the rounds (see the module text); ``proposed``
    holds the best first and second level even where they were not kept."""
    nic = nic_rate(rounds)
    n = rounds.nodes
    t_nic = rounds.size / nic
    overhead = max(0.0, min(t for t in rounds.solo if t > 0) - t_nic)
    base = loss(rounds, nic, [])
    notes = [f"crossbar: loss {base:.3f}"]
    scored = []
    for group in candidates(rounds, nic):
        cap, value = fit_capacity(rounds, nic, group, [], 0)
        scored.append((value, group, cap))
    levels: list[Level] = []
    proposed: list[Level] = []
    best = base
    first = _parsimonious(scored)
    if first is not None:
        value, group, cap = first
        group, cap, value = local_search(rounds, nic, group, cap, [], 0)
        groups = Level(group, cap).groups
        proposed.append(Level(group, cap))
        kept = value <= GAIN * base and cap < BOTTLENECK * most_load(groups, n) * nic
        notes.append(
            f"first level {groups}: B = {cap:.4g} B/s, loss {value:.3f}"
            + ("" if kept else " (not kept)")
        )
        if kept:
            levels, best = [Level(group, cap)], value
    if proposed:
        top = proposed[0]
        second = []
        for _, group, _ in scored:
            if _refines(group, top.group):
                if min(len(g) for g in Level(group, 0.0).groups) < 2:
                    continue  # a group of one under a switch is that node's own link
                where = 0
            elif _refines(top.group, group):
                where = 1
            else:
                continue
            cap, value = fit_capacity(rounds, nic, group, [top], where)
            second.append((value, group, cap, where))
        if second:
            low = min(x[0] for x in second)
            near = [x for x in second if x[0] <= TIE * low + 1e-12]
            value, group, cap, where = min(near, key=lambda x: (len(set(x[1])), x[0]))
            group, cap, value = local_search(rounds, nic, group, cap, [top], where)
            groups = Level(group, cap).groups
            proposed.insert(where, Level(group, cap))
            kept = (
                bool(levels)
                and value <= GAIN * best
                and cap < BOTTLENECK * most_load(groups, n) * nic
            )
            notes.append(
                f"second level {groups}: B = {cap:.4g} B/s, loss {value:.3f}"
                + ("" if kept else " (not kept)")
            )
            if kept:
                levels.insert(where, Level(group, cap))
                # each level again with the other in place: its grouping, then its capacity
                for k in (1 - where, where):
                    other = levels[1 - k]
                    g, c, best = local_search(rounds, nic, levels[k].group, levels[k].capacity,
                                              [other], k)  # fmt: skip
                    levels[k] = Level(g, c)
                merged = _merge_singletons(levels[0].group, levels[1].group)
                if merged != levels[0].group:
                    c, value = fit_capacity(rounds, nic, merged, [levels[1]], 0)
                    if value <= TIE * best:
                        levels[0], best = Level(merged, c), value
                        notes.append(
                            f"the finer level's lone nodes of one parent merged: {value:.3f}"
                        )
    return Inference(n, nic, overhead, levels, best, base, notes, proposed)


def confirmation(nodes: int, proposed: Sequence[Level]) -> list[tuple[tuple[int, int], ...]]:
    """Rounds that test each proposed level: for every group g, min(|g|, N - |g|) of its
    nodes send one flow each to distinct nodes outside it at once, first to those within its
    parent group (the next coarser level's, or all nodes), then to the rest. The flows load
    g's uplink with as many flows as it can carry in a round, so a level that is not there
    predicts slowdowns these rounds do not show."""
    out = []
    for k, lv in enumerate(proposed):
        parent = proposed[k + 1].group if k + 1 < len(proposed) else (0,) * nodes
        for g in lv.groups:
            inside = set(g)
            near = [j for j in range(nodes) if parent[j] == parent[g[0]] and j not in inside]
            far = [j for j in range(nodes) if parent[j] != parent[g[0]] and j not in inside]
            targets = near + far
            m = min(len(g), len(targets))
            if m >= 1:
                out.append(tuple(zip(g[:m], targets[:m])))
    return list(dict.fromkeys(out))


def explore(
    current: Callable[[], Rounds],
    measure: Callable[[tuple[tuple[int, int], ...]], None],
    passes: int = 3,
) -> Inference:
    """Infer, measure the :func:`confirmation` rounds of the levels proposed that were not
    measured yet (``measure(flows)`` adds a round to what ``current()`` returns), and infer
    again, until every proposal has been tested (at most ``passes`` times)."""
    done: set[tuple[tuple[int, int], ...]] = set()
    for _ in range(passes):
        found = infer(current())
        todo = [f for f in confirmation(found.nodes, found.proposed) if f not in done]
        if not todo:
            return found
        for flows in todo:
            done.add(flows)
            measure(flows)
    return infer(current())


def rounds_of(rows: list[dict[str, Any]], n: int, size: int):
    """The :class:`commodel.fit.topology.Rounds` of a campaign's sample rows (node ranks
    renumbered 0..N-1 in rank order): per round the median time of each flow."""
    ranks = sorted({int(r["src"]) for r in rows} | {int(r["dst"]) for r in rows})
    index = {r: i for i, r in enumerate(ranks)}
    flows: dict[tuple[str, str], dict[int, list[float]]] = {}
    order: list[tuple[str, str]] = []
    latency = [[0.0] * n for _ in range(n)] if any(r["quantity"] == "rtt" for r in rows) else None
    for r in rows:
        if r["quantity"] == "rtt":
            a, b = index[int(r["src"])], index[int(r["dst"])]
            latency[a][b] = latency[b][a] = float(r["value_s"])
            continue
        extra = r["extra"] if isinstance(r["extra"], dict) else json.loads(r["extra"] or "{}")
        key = (str(r["pattern"]), extra["round"])
        if key not in flows:
            flows[key] = {}
            order.append(key)
        flows[key].setdefault(int(extra["flow"]), []).append(float(r["value_s"]))
    solo = [0.0] * n
    rounds = []
    pairs = {key: json.loads(key[1]) for key in order}
    floor = _impossible_below(flows, pairs)
    for key in order:
        kept = []
        for k, pair in enumerate(pairs[key]):
            valid = [t for t in flows[key].get(k, []) if t >= floor]
            if pair[0] != pair[1] and valid:  # a node's own loopback is not the network's
                kept.append((tuple(pair), _low_median(valid)))
        if key[0] == "solo":
            if kept:
                solo[kept[0][0][0]] = kept[0][1]
        elif kept:
            rounds.append(Round(tuple(p for p, _ in kept), tuple(t for _, t in kept)))
    if len(ranks) != n:
        raise CommodelError(f"the topology campaign has flows of {len(ranks)} nodes, not {n}")
    return Rounds(n, size, solo, rounds, latency)


def _impossible_below(flows: dict, pairs: dict) -> float:
    """Half the least of the flows' median times (of their repetitions; a node's own
    loopback aside): no flow of S bytes is faster than its NICs allow, so a repetition below
    this is a glitch of the timing (one confirmation flow took 41 us for 256 KiB where its
    NICs need 55 ms), not the network. Against the flows' medians, not the solo flows'
    alone: where the solo flows i -> i+1 all cross a backbone narrower than half a NIC,
    the flows within a rack are faster than half of theirs. Every flow keeps at least its
    median and the repetitions above it; one glitch among two repetitions is left out."""
    medians = [
        statistics.median(ts)
        for key, round_pairs in pairs.items()
        for k, (src, dst) in enumerate(round_pairs)
        if src != dst and (ts := flows[key].get(k))
    ]
    return 0.5 * min(medians) if medians else 0.0


def _low_median(xs: list[float]) -> float:
    """The lower median: of two repetitions the faster (noise only adds time)."""
    s = sorted(xs)
    return s[(len(s) - 1) // 2]
