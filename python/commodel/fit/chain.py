"""``tcp.port_timeouts``: the timeouts of a chained pairwise exchange, through ``tcpflow``.

``measure chain`` (:mod:`commodel.measure.chain`) ran the n - 1 steps of a pairwise exchange
back to back, ``reps`` rounds at each size m, and counted the hosts' retransmission
timeouts: τ(m) a round on average. ``tcpflow``'s timeouts at ports between switches
(docs/models.md, *Timeouts at ports between switches*) make a message of at least M bytes
that shares a link between switches with another lose its tail with probability q(m).
With every other section of the platform as fitted, q(m) is the one with which the model
predicts τ(m) timeouts per run of the same exchange, on average over the runs with the
platform's noise (seeds 1..K, as a prediction's median takes them; the run without noise
where the platform has no ``tcp.spread``), found by bisection on [0, 1]: the timeouts the
model's other rules predict for the exchange count first, and q is 0 where they reach
τ(m) already; 1 where even q = 1 predicts fewer. M is the smallest size measured. Nothing
is written where every q is 0 (no timeouts beyond the other rules) or the network is one
switch (no port between switches).
"""

from __future__ import annotations

import copy
import json
import math
import statistics
from typing import Any

from ..errors import CommodelError
from .efficiency import model_doc, tcpflow_lacks

BISECTIONS = 12  # q to within 2^-12


def per_round(samples: list[dict[str, Any]]) -> dict[int, tuple[float, int]]:
    """Per size: (the mean timeouts a round, the rounds) of the campaign's rounds."""
    by: dict[int, list[int]] = {}
    for s in samples:
        if s.get("quantity") != "chain":
            continue
        extra = s["extra"] if isinstance(s["extra"], dict) else json.loads(s["extra"] or "{}")
        hit = extra.get("timeouts")
        if hit is None:
            raise CommodelError(
                f"chain campaign: a round at {s['size_bytes']} B has no timeout count (the "
                "hosts' /proc/net/netstat could not be read)"
            )
        by.setdefault(int(s["size_bytes"]), []).append(int(hit))
    return {m: (statistics.mean(v), len(v)) for m, v in sorted(by.items())}


def model_timeouts(doc: dict[str, Any], sched: Any, table: dict[str, list] | None) -> float:
    """The mean count of RTO events ``tcpflow`` predicts for ``sched`` over the runs with
    the platform's noise (seeds 1..K, as a prediction's median takes them; the run without
    noise where it has no ``tcp.spread``), with ``table`` as ``tcp.port_timeouts`` (None:
    without)."""
    from ..platform import platform_from_dict
    from ..prediction import NOISE_RUNS, predict

    d = copy.deepcopy(doc)
    d.setdefault("tcp", {}).pop("port_timeouts", None)
    if table is not None:
        d["tcp"]["port_timeouts"] = table
    plat = platform_from_dict(d)
    tcp = plat.sections.get("tcp")
    sigma = getattr(tcp, "spread", None) if tcp is not None else None
    if not sigma:
        runs = [predict(sched, plat, "tcpflow", record_messages=False, noise=0)]
    else:
        noise = {"sigma": sigma, "by_size": tcp.noise_by_size()}
        runs = [
            predict(sched, plat, "tcpflow", record_messages=False, jitter={**noise, "seed": k})
            for k in range(1, NOISE_RUNS + 1)
        ]
    return statistics.mean(len(p.rto_events) for p in runs)


def fit_rate(doc: dict[str, Any], sched: Any, m: int, tau: float) -> tuple[float, float, float]:
    """q at size m for τ timeouts a round: (q, the model's timeouts without the rule, with
    q)."""
    base = model_timeouts(doc, sched, None)
    if base >= tau:
        return 0.0, base, base

    def at(q: float) -> float:
        return model_timeouts(doc, sched, {"sizes": [m], "rate": [q]})

    top = at(1.0)
    if top <= tau:
        return 1.0, base, top
    lo, hi = 0.0, 1.0
    for _ in range(BISECTIONS):
        mid = (lo + hi) / 2
        if at(mid) < tau:
            lo = mid
        else:
            hi = mid
    q = min(1.0, math.ceil(hi * 1e4) / 1e4)  # the least q found to reach τ, 4 decimals up
    return q, base, at(q)


def port_timeouts_section(
    doc: dict[str, Any], nodes: int, measured: dict[int, tuple[float, int]]
) -> tuple[dict[str, list] | None, str]:
    """``tcp.port_timeouts`` from the measured timeouts a round per size, and the comment."""
    from ..schedules import collective

    sizes, rates, notes = [], [], []
    for m, (tau, rounds) in measured.items():
        sched = collective("alltoall-pairwise", nodes, m)
        q, base, got = fit_rate(doc, sched, m, tau)
        sizes.append(m)
        rates.append(q)
        notes.append(
            f"{m} B: {tau:.2f} timeouts a round measured ({rounds} rounds), the model's other "
            f"rules {base:.2f}, q {q:g} {got:.2f}"
        )
    said = "; ".join(notes)
    if not any(rates):
        return None, f"port_timeouts: none (chained pairwise exchange of {nodes} nodes: {said})"
    return (
        {"sizes": sizes, "rate": rates},
        f"port_timeouts, q(m) of a message sharing a port between switches, through tcpflow from "
        f"a chained pairwise exchange of {nodes} nodes: {said}",
    )


def through_model(sections: dict[str, Any], comments: dict[str, str], db, camp) -> None:
    """``tcp.port_timeouts`` from a chain campaign, fitted through ``tcpflow`` with the other
    sections (:func:`port_timeouts_section`); a comment why not where the campaign measured
    nothing, the network is one switch, or the platform lacks what ``tcpflow`` needs."""
    measured = per_round(db.samples(camp.id))
    if not measured:
        comments["tcp"] = comments.get("tcp", "") + (
            "\nport_timeouts: none (the chain campaign has no rounds)"
        )
        return
    if sections.get("network", {}).get("topology") == "crossbar":
        comments["tcp"] = comments.get("tcp", "") + (
            "\nport_timeouts: none (one switch: no port between switches)"
        )
        return
    lacking = tcpflow_lacks(sections)
    if lacking:
        comments["tcp"] = comments.get("tcp", "") + (
            f"\nport_timeouts not fitted: it is fitted through tcpflow, which needs the "
            f"{lacking} section"
        )
        return
    nodes = int(sections["network"]["nodes"])
    table, note = port_timeouts_section(model_doc(sections), nodes, measured)
    if table is not None:
        sections["tcp"]["port_timeouts"] = table
    comments["tcp"] = comments.get("tcp", "") + "\n" + note


def summary(result: dict[str, Any], db) -> str:
    """What ``measure chain`` prints: per size, the timeouts a round."""
    lines = [f"campaign {result['campaign']}: chain ({result['nodes']} nodes)"]
    measured = per_round(db.samples(result["campaign"]))
    if not measured:
        lines.append("  no rounds")
    for m, (tau, rounds) in measured.items():
        lines.append(f"  {m} B: {tau:.2f} timeouts a round ({rounds} rounds)")
    return "\n".join(lines)
