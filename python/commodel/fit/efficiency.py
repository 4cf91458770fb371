"""``tcp.efficiency`` from an ``efficiency`` campaign (model ``tcpflow``).

Per size m, with T_ow the mean time of a one-way flow and T_ow2 the mean of the later of
two one-way flows of one repetition (over every two of them):

* e_x(m) = T_ow2 / T_x, T_x the mean, over exchanging pairs and repetitions, of the later of
  the pair's two flows: what a node that sends to and receives from one peer waits for. (In
  an exchange one direction often finishes in the one-way time and the other takes up to
  twice that; the expectation of the pair's time is what the model charges.) The later of
  two is set against the later of two: two flows of a round that do nothing to each other
  differ by chance, and the later of them takes longer than a flow's mean (on two-rack-8 at
  4 KiB T_ow2 = 0.210 ms against T_ow = 0.179 ms, the exchanging flows 0.177 ms each). That
  is no loss of the exchange; the model, whose flows of one round do not differ, would
  otherwise charge it to every exchange. Measured against T_ow, e_x(4 KiB) was 0.70-0.75
  where the exchanging flows alone ran as fast as one way.
* e_d(m) = T_ow / the mean time of a flow of the ring (every node sends and receives, with
  different peers): a flow against a flow.

A ratio above 1 (both ways measured faster than one way: noise) is written as 1, and the
comment says so.

Where the campaign ran the pairs in groups, one after the other (ranks sharing a machine's
cores: :mod:`commodel.measure.efficiency`), the flows of repetition r of every group count
as one repetition: the later of two one-way flows is then mostly that of two flows of
different groups, which do nothing to each other either.

**Against the model's own one-way time** (:func:`rebase_efficiency`, which ``fit`` applies
when the platform has ``plogp`` and ``network``): the one-way rounds can run faster than
``tcpflow`` lets a flow run. A token-bucket port (the emulated cluster's ``tbf``) passes an
idle port's burst at once, so a lone 4 KiB flow there takes 0.14 ms where the model, which
charges every flow at least its wire time m / b, takes 0.35 ms. The ratio T_ow / T then
charges the model's wire-time flow the buckets' head start as if it were TCP's loss (e_x(4
KiB) = 0.52 on two-rack-8, and a 4 KiB exchange predicted at 0.70 ms against 0.27 ms
measured). What both ways cost is the excess T - T_1 (T_1 = T_ow2 for e_x, T_ow for e_d);
with T_m the mean flow time ``tcpflow`` predicts for the one-way round itself (without the
efficiency tables), e = T_m / (T_m + T - T_1), the value that makes the model's flow take
the measured excess more than its own one-way time. Where T_m = T_1 this is the ratio
above; the two part where g(m) < m / b. With two nodes there is no ring; e_d is then e_x,
which ``tcpflow`` never uses on two nodes. The spread between the flows of one round (stragglers) is not part of
e: the comment gives the mean round time (the last flow's end) beside it.

``fifo_limit`` comes from the ``fanout`` rounds (one node posts k messages at once): a size
is served in posting order when the first peer's mean time is at most halfway between 1/k
and 1 of the last one's (one after the other gives 1/k, shared gives 1). ``fifo_limit`` is
the largest size served in order; it is left out when none was, or when there are no fanout
rounds. (Not the end of a leading run: where per-message costs c dwarf a message's wire
time w, in order gives (c + w) / (c + k w), close to 1 as well, so the smallest sizes cannot
tell the two apart, and it does not matter there.)
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections import defaultdict
from typing import Any, NamedTuple

from ..errors import CommodelError

Flow = tuple[int, int]  # (src, dst)
Flows = dict[Flow, float]  # (src, dst) -> seconds, one repetition


def flows_by_round(samples: list[dict[str, Any]]) -> dict[tuple[str, int], list[Flows]]:
    """(pattern, size) -> per repetition, the time of each flow."""
    reps: dict[tuple[str, int], dict[int, Flows]] = defaultdict(lambda: defaultdict(dict))
    for s in samples:
        if s.get("phase") != "efficiency" or s.get("quantity") != "flow":
            continue
        key = (str(s["pattern"]), int(s["size_bytes"]))
        reps[key][int(s["repetition"])][(int(s["src"]), int(s["dst"]))] = float(s["value_s"])
    return {k: [v[r] for r in sorted(v)] for k, v in sorted(reps.items())}


def pair_times(rounds: list[Flows]) -> list[float]:
    """The later flow of every exchanging pair of every repetition."""
    return [
        max(t, flows[(b, a)])
        for flows in rounds
        for (a, b), t in flows.items()
        if a < b and (b, a) in flows
    ]


def fifo_limit(rounds: dict[tuple[str, int], list[Flows]]) -> tuple[int | None, str]:
    """The largest fanout size up to which a node's NIC served messages in posting order,
    and a comment with the first / last peer's mean time per size."""
    limit, cells = None, []
    for (pattern, m), reps in rounds.items():
        if pattern != "fanout":
            continue
        by_dst: dict[int, list[float]] = defaultdict(list)
        for f in reps:
            for (_, d), t in f.items():
                by_dst[d].append(t)
        order = sorted(by_dst)  # posting order: the peers in node order
        if len(order) < 2:
            continue
        first, last = statistics.mean(by_dst[order[0]]), statistics.mean(by_dst[order[-1]])
        ratio = first / last if last > 0 else 1.0
        in_order = ratio <= (1 / len(order) + 1) / 2
        cells.append(f"{m} B {ratio:.2f}{'' if in_order else ' shared'}")
        if in_order:
            limit = m
    if not cells:
        return None, ""
    return limit, "fanout, first / last peer's time: " + ", ".join(cells)


class RoundMeans(NamedTuple):
    """At one size: T_ow, the mean one-way flow; T_ow2, the mean of the later of two one-way
    flows of one repetition (every two of them; T_ow with one flow a repetition); T_x, the
    mean of the exchanging pairs' later flows; T_d, the mean ring flow (T_x without ring
    rounds)."""

    t_ow: float
    t_ow2: float
    t_x: float
    t_d: float

    def both_ways(self) -> tuple[tuple[str, float, float], ...]:
        """Per table, (key, T both ways, T_1 one way to set it against): later against later
        for ``exchange``, a flow against a flow for ``duplex``."""
        return (("exchange", self.t_x, self.t_ow2), ("duplex", self.t_d, self.t_ow))


def round_means(rounds: dict[tuple[str, int], list[Flows]], m: int) -> RoundMeans:
    """The :class:`RoundMeans` of the rounds of size ``m``."""
    oneway = rounds[("oneway", m)]
    t_ow = statistics.mean(t for f in oneway for t in f.values())
    later = [max(a, b) for f in oneway for a, b in itertools.combinations(f.values(), 2)]
    t_ow2 = statistics.mean(later) if later else t_ow
    pairs = pair_times(rounds[("exchange", m)])
    if not pairs:
        raise CommodelError(f"the exchange rounds of {m} B have no pair with both flows")
    t_x = statistics.mean(pairs)
    ring = rounds.get(("duplex", m))
    t_d = statistics.mean(t for f in ring for t in f.values()) if ring else t_x
    return RoundMeans(t_ow, t_ow2, t_x, t_d)


def efficiency_section(samples: list[dict[str, Any]]) -> tuple[dict[str, Any], str]:
    """The ``efficiency`` part of the ``tcp`` section and a comment with the means."""
    rounds = flows_by_round(samples)
    sizes = sorted({m for (p, m) in rounds if p == "oneway" and ("exchange", m) in rounds})
    if not sizes:
        raise CommodelError("the efficiency campaign has no one-way and exchange rounds")
    table: dict[str, list[float]] = {"exchange": [], "duplex": []}
    notes, capped = [], []
    for m in sizes:
        means = round_means(rounds, m)
        span = statistics.mean(max(f.values()) for f in rounds[("exchange", m)])
        line = (
            f"{m} B: one-way flow {means.t_ow * 1e3:.3f} ms (two {means.t_ow2 * 1e3:.3f} ms), "
            f"exchanging pair {means.t_x * 1e3:.3f} ms (round {span * 1e3:.3f} ms)"
        )
        if ("duplex", m) in rounds:
            line += f", ring flow {means.t_d * 1e3:.3f} ms"
        notes.append(line)
        for key, t, t_1 in means.both_ways():
            e = t_1 / t
            if e > 1:
                capped.append(f"{key}({m} B) = {e:.3f}")
                e = 1.0
            table[key].append(round(e, 4))
    note = "mean times: " + "; ".join(notes)
    if capped:
        note += "\nmeasured above 1, written as 1: " + ", ".join(capped)
    return {"sizes": sizes, **table}, note


def round_schedule(flows: list[tuple[int, int]], m: int, nodes: int) -> Any:
    """The GOAL schedule of one round: every flow (src, dst) a send of ``m`` bytes posted at
    once with its receive, on ``nodes`` ranks."""
    from ..schedules import parse_goal

    lines = [f"num_ranks {nodes}"]
    for r in range(nodes):
        lines.append(f"rank {r} {{")
        for i, (a, b) in enumerate(flows):
            if a == r:
                lines.append(f"s{i}: send {m}b to {b} tag {i}")
            if b == r:
                lines.append(f"r{i}: recv {m}b from {a} tag {i}")
        lines.append("}")
    return parse_goal("\n".join(lines) + "\n", "<one-way round>")


def oneway_groups(samples: list[dict[str, Any]]) -> dict[int, list[list[Flow]]]:
    """Per size, the flows of each group of one-way pairs that ran together (one group
    where the campaign ran every pair at once)."""
    out: dict[int, dict[int, set[Flow]]] = defaultdict(lambda: defaultdict(set))
    for s in samples:
        if s.get("phase") != "efficiency" or s.get("quantity") != "flow":
            continue
        if s.get("pattern") != "oneway":
            continue
        group = int((s.get("extra") or {}).get("group", 0))
        out[int(s["size_bytes"])][group].add((int(s["src"]), int(s["dst"])))
    return {m: [sorted(g[k]) for k in sorted(g)] for m, g in sorted(out.items())}


def model_oneway(doc: dict[str, Any], samples: list[dict[str, Any]]) -> dict[int, float]:
    """Per size of the efficiency tables, the mean flow time (start to the receive's end)
    ``tcpflow`` predicts for the one-way round on platform document ``doc``, without
    ``tcp.efficiency``: each group of pairs on its own, and without the ``cpu`` section
    where the group's ranks had the cores to themselves (ranks that sat the round out took
    no CPU; s = P / C with P the group's ranks is then at most 1)."""
    import copy

    from ..platform import platform_from_dict
    from ..prediction import predict

    d = copy.deepcopy(doc)
    d.get("tcp", {}).pop("efficiency", None)
    platform = platform_from_dict(d)
    d.pop("cpu", None)
    own_cores = platform_from_dict(d)
    cores = int((doc.get("cpu") or {}).get("cores") or 0)
    out = {}
    for m, groups in oneway_groups(samples).items():
        times = []
        for flows in groups:
            ranks = {r for f in flows for r in f}
            pf = own_cores if len(ranks) <= cores else platform
            pred = predict(round_schedule(flows, m, int(doc["nodes"])), pf, "tcpflow", noise=0)
            times += [msg.end_s for msg in pred.messages]
        out[m] = statistics.mean(times)
    return out


def rebase_efficiency(
    section: dict[str, Any], samples: list[dict[str, Any]], base: dict[int, float]
) -> tuple[dict[str, Any], str]:
    """The efficiency tables taken against the model's one-way time ``base`` (size -> T_m,
    :func:`model_oneway`): e = T_m / (T_m + T - T_1), at most 1, T_1 = T_ow2 for e_x and
    T_ow for e_d (module docstring); the ``fanin`` entry is kept. And a comment with T_m and
    the values before and after."""
    rounds = flows_by_round(samples)
    out = dict(section)
    cells = []
    for key in ("exchange", "duplex"):
        out[key] = list(section[key])
    for i, m in enumerate(section["sizes"]):
        t_m = base[m]
        cell = f"{m} B {t_m * 1e3:.3f} ms"
        for key, t, t_1 in round_means(rounds, m).both_ways():
            e = min(1.0, t_m / (t_m + max(0.0, t - t_1)))
            cell += f", {key} {section[key][i]:.3f} -> {e:.3f}"
            out[key][i] = round(e, 4)
        cells.append(cell)
    note = (
        "efficiency against tcpflow's own one-way time T_m (e = T_m / (T_m + T - T_1)): "
        + "; ".join(cells)
    )
    return out, note


def ring_spread(rounds: dict[tuple[str, int], list[Flows]]) -> dict[str, list] | None:
    """``tcp.spread_by_size``: per size of the ring rounds (every node sends and receives),
    sigma, the root mean square of the log of each flow's time about its repetition's mean
    (log) time: how much one message's time varies where every node is busy both ways;
    None without ring rounds of two flows or more."""
    sizes, sigma = [], []
    for (pattern, m), reps in sorted(rounds.items()):
        if pattern != "duplex":
            continue
        devs = []
        for flows in reps:
            if len(flows) > 1 and all(t > 0 for t in flows.values()):
                mean = statistics.mean(math.log(t) for t in flows.values())
                devs += [math.log(t) - mean for t in flows.values()]
        if devs:
            sizes.append(m)
            sigma.append(round(min(10.0, math.sqrt(statistics.mean(d * d for d in devs))), 4))
    return {"sizes": sizes, "sigma": sigma} if sizes else None


def efficiency_and_fifo_limit(samples: list[dict[str, Any]]) -> tuple[dict[str, Any], str]:
    """The ``tcp`` entries an ``efficiency`` campaign gives (``efficiency``, ``fifo_limit``
    when its fan-out rounds found one, ``spread_by_size`` from its ring rounds) and the
    comment on them."""
    section, note = efficiency_section(samples)
    tcp: dict[str, Any] = {"efficiency": section}
    rounds = flows_by_round(samples)
    limit, fan_note = fifo_limit(rounds)
    if limit is not None:
        tcp["fifo_limit"] = limit
    if fan_note:
        note += f"\nfifo_limit {limit if limit is not None else 'none'}: {fan_note}"
    by_size = ring_spread(rounds)
    if by_size is not None:
        tcp["spread_by_size"] = by_size
        note += "\nspread_by_size, sigma of a ring flow's time about its round's: " + ", ".join(
            f"{m} B {s:.3f}" for m, s in zip(by_size["sizes"], by_size["sigma"])
        )
    return tcp, note


def sections(db, camp) -> dict[str, Any]:
    """The ``tcp`` entries of an efficiency campaign, with their comment (``commodel fit``)."""
    tcp, note = efficiency_and_fifo_limit(db.samples(camp.id))
    return {"tcp": tcp, "__comment__": note}


def model_doc(sections: dict[str, Any]) -> dict[str, Any]:
    """A platform document of the sections fitted so far (with ``network``), for the fits
    that go through the model."""
    return {
        "commodel_platform": 1,
        "name": "fit",
        **sections,
        "nodes": sections["network"]["nodes"],
    }


def tcpflow_lacks(sections: dict[str, Any]) -> str | None:
    """What the sections fitted so far lack for ``tcpflow`` to predict (``plogp``,
    ``network``, or else ``tcp.efficiency``), for the fits through it; None: nothing."""
    lacking = [k for k in ("plogp", "network") if k not in sections]
    if lacking or "efficiency" not in sections.get("tcp", {}):
        return ", ".join(lacking or ["tcp.efficiency"])
    return None


def through_model(sections: dict[str, Any], comments: dict[str, str], db, camp) -> None:
    """Once the platform's other sections are fitted: ``tcp.efficiency`` taken against
    ``tcpflow``'s own one-way time (:func:`rebase_efficiency`), where the platform has what
    the model needs (``plogp``, ``network``); then ``tcp.efficiency.fanin`` from the
    all-to-all rounds, fitted through ``tcpflow`` (:mod:`commodel.fit.fanin`), with a
    comment why not where the rounds or the sections it needs are missing."""
    from .fanin import alltoall_spans, fanin_section

    samples = db.samples(camp.id)
    eff = sections.get("tcp", {}).get("efficiency")
    if eff is not None and "plogp" in sections and "network" in sections:
        base = model_oneway(model_doc(sections), samples)
        table, note = rebase_efficiency(eff, samples, base)
        sections["tcp"]["efficiency"] = table
        comments["tcp"] = comments.get("tcp", "") + "\n" + note
    n, spans = alltoall_spans(samples)
    if not spans:
        return
    lacking = tcpflow_lacks(sections)
    if lacking:
        comments["tcp"] = comments.get("tcp", "") + (
            f"\nfanin not fitted: it is fitted through tcpflow, which needs the {lacking} section"
        )
        return
    table, note = fanin_section(model_doc(sections), n, spans)
    sections["tcp"]["efficiency"]["fanin"] = table
    comments["tcp"] = comments.get("tcp", "") + "\n" + note


def summary(result: dict[str, Any], db) -> str:
    """What ``measure efficiency`` prints: the comment of its fit, e_x(m), e_d(m) against
    the measured one-way time, and the mean all-to-all round times."""
    from .fanin import alltoall_spans

    rows = db.samples(result["campaign"])
    tcp, note = efficiency_and_fifo_limit(rows)
    section = tcp["efficiency"]
    lines = [
        note,
        "size [B]   e_x (exchange)   e_d (duplex)   (T_ow / T; `fit` with plogp and network "
        "takes them against tcpflow's own one-way time)",
    ]
    for m, ex, ed in zip(section["sizes"], section["exchange"], section["duplex"]):
        lines.append(f"{m:>9}   {ex:>14.3f}   {ed:>12.3f}")
    n, spans = alltoall_spans(rows)
    if spans:
        lines.append(
            f"all-to-all rounds of {n} nodes, mean round time (e_f: `fit` with plogp and network)"
        )
        for m, t in spans.items():
            lines.append(f"{m:>9}   {t * 1e3:>10.3f} ms")
    return "\n".join(lines)
