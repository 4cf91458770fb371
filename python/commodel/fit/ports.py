"""``tcp.timeouts`` and ``network.buffer``: what the switch ports' timeouts say.

``tcp.timeouts``, ``tcpflow``'s timeouts of fan-in, comes from the probes into every port
toward a node, ``host`` and ``alltoall``, without the model (:func:`timeouts_section`): K
senders into one node, each sending to F nodes, time out from M bytes on.

``network.buffer`` is fitted through ``tcpflow``'s tail-drop rule.

``measure ports`` times bursts of k flows of m bytes into one port, m doubling, and counts
the senders' retransmission timeouts (:mod:`commodel.measure.ports`). A size *times out*
when its rounds counted at least half a timeout each on average (and one at least): the
measure ``validate`` and the held-out study apply to a schedule's repetitions. With every
other section of the platform as fitted, the buffer of a height is the one with which ``tcpflow`` (``tcp.rto_rule: buffer``)
predicts a timeout at exactly the sizes that timed out, or at as many of the sizes as any
buffer can: over a grid of buffers from :data:`LOW` to :data:`HIGH` (log-spaced), the middle
(geometric) of the best-scoring run; where every size timed out, the largest that
predicts them all (the port holds at most that). Where that run reaches :data:`HIGH` at
height 1 (the probes bound the buffer only from below: the harshest incast measured lost
no more tails than a large port would), nothing is written: fed its least value, the rule
would predict tail drops in patterns milder than the probe (decided on dev draws of the
held-out study, docs/validation.md, *The held-out study*).
Height 1 (the port toward a node) comes from the ``host`` probe, height 2 (a rack's uplink)
from the ``uplink`` probe with height 1 in place; a crossbar has height 1 only.
"""

from __future__ import annotations

import json
import math
from typing import Any

from ..errors import CommodelError
from .efficiency import model_doc, round_schedule

LOW, HIGH, STEPS = 2 * 1024, 4 * 1024 * 1024, 49


def timed_out(samples: list[dict[str, Any]]) -> dict[str, dict[int, tuple[bool, list]]]:
    """Per probe and size: (did it time out, its flows); it did where its rounds counted at
    least max(1, rounds / 2) timeouts in all."""
    out: dict[str, dict[int, list]] = {}
    flows: dict[str, list] = {}
    for s in samples:
        if s["quantity"] != "burst":
            continue
        extra = s["extra"] if isinstance(s["extra"], dict) else json.loads(s["extra"] or "{}")
        hit = extra.get("timeouts")
        out.setdefault(s["pattern"], {}).setdefault(int(s["size_bytes"]), []).append(hit)
        flows[s["pattern"]] = json.loads(extra["flows"])
    result: dict[str, dict[int, tuple[bool, list]]] = {}
    for probe, by_size in out.items():
        result[probe] = {}
        for m, hits in sorted(by_size.items()):
            known = [h for h in hits if h is not None]
            if not known:
                raise CommodelError(
                    f"ports campaign: the {probe} probe at {m} B has no timeout counts (the "
                    "hosts' /proc/net/netstat could not be read)"
                )
            result[probe][m] = (sum(known) >= max(1.0, len(known) / 2), flows[probe])
    return result


def predicts_timeout(doc: dict[str, Any], buffers: list[int], sched: Any) -> bool:
    from ..platform import platform_from_dict
    from ..prediction import predict

    d = json.loads(json.dumps(doc))
    d.get("tcp", {}).pop("timeouts", None)  # the tail-drop rule's own timeouts only
    d["network"]["buffer"] = buffers
    d.setdefault("tcp", {})["rto_rule"] = "buffer"
    pred = predict(sched, platform_from_dict(d), "tcpflow", record_messages=False, noise=0)
    return len(pred.rto_events) > 0


def _grid() -> list[int]:
    return [int(round(LOW * (HIGH / LOW) ** (k / (STEPS - 1)))) for k in range(STEPS)]


def fit_height(
    doc: dict[str, Any], nodes: int, sizes: dict[int, tuple[bool, list]], fixed: list[int]
) -> tuple[int | None, str, str]:
    """The buffer of the next height after ``fixed`` (see the module text), what it is
    (``"at least"``, ``"at most"``, ``"between"``; ``"none"`` where nothing was fitted)
    and a note."""
    heights = network_heights(doc["network"])
    scheds = {
        m: round_schedule([tuple(f) for f in flows], m, nodes) for m, (_, flows) in sizes.items()
    }
    grid = _grid()
    scores = []
    for b in grid:
        buffers = (fixed + [b] + [HIGH] * heights)[:heights]
        hits = sum(
            predicts_timeout(doc, buffers, scheds[m]) == out for m, (out, _) in sizes.items()
        )
        scores.append(hits)
    best = max(scores)
    if min(scores) == best:
        seen = ", ".join(f"{m} B {'timeout' if out else 'none'}" for m, (out, _) in sizes.items())
        return (
            None,
            "none",
            (
                f"tcpflow predicts the same of every probe at any buffer from {grid[0]} to "
                f"{grid[-1]} B ({seen})"
            ),
        )
    runs, start = [], None
    for k, s in enumerate(scores + [-1]):
        if s == best and start is None:
            start = k
        elif s != best and start is not None:
            runs.append((start, k - 1))
            start = None
    lo, hi = max(runs, key=lambda r: r[1] - r[0])
    if hi == len(grid) - 1:
        value = grid[lo]  # nothing dropped: at least this
        kind, how = "at least", "at least (no size timed out more than the model allows)"
    elif lo == 0:
        value = grid[hi]
        kind, how = "at most", "at most"
    else:
        value = int(round(math.sqrt(grid[lo] * grid[hi])))
        kind, how = "between", f"between {grid[lo]} and {grid[hi]} B, their geometric middle"
    seen = ", ".join(f"{m} B {'timeout' if out else 'none'}" for m, (out, _) in sizes.items())
    return value, kind, f"{value} B, {how}; {best}/{len(sizes)} sizes as measured ({seen})"


def network_heights(network: dict[str, Any]) -> int:
    """The heights of a fitted ``network`` section: a binary tree's D, a crossbar's 1, 2
    for racks (the port toward a node, the port on a rack's uplink)."""
    if "unidirectional" in network:
        return len(network["unidirectional"]["b"])
    return 1 if network["topology"] == "crossbar" else 2


def buffer_section(
    doc: dict[str, Any], samples: list[dict[str, Any]]
) -> tuple[list[int] | None, str]:
    """``network.buffer`` (one value per height) and the comment saying how it was fitted;
    None where no buffer changes what the model predicts of the probes (the rule cannot
    tell them apart: every buffer scores the same)."""
    probes = timed_out(samples)
    if "host" not in probes:
        raise CommodelError("the ports campaign has no host probe")
    nodes = int(doc["nodes"])
    b1, kind1, note1 = fit_height(doc, nodes, probes["host"], [])
    if b1 is None:
        return None, f"buffer not fitted: {note1}"
    if kind1 == "at least":
        # the probes show only that the port holds at least b1: the harshest incast we
        # measured lost no tail, so the rule is left off rather than fed the least
        # buffer that agrees (which predicts tail drops in patterns milder than the probe)
        return None, (
            f"buffer not written: the port toward a node holds at least {b1} B ({note1}); "
            "without network.buffer tcpflow predicts no tail drops"
        )
    notes = [f"buffer (measure ports, through tcpflow's tail-drop rule): height 1 {note1}"]
    out = [b1]
    if network_heights(doc["network"]) == 2 and "unidirectional" not in doc["network"]:
        if "uplink" in probes:
            b2, _, note2 = fit_height(doc, nodes, probes["uplink"], [b1])
            if b2 is None:
                b2 = HIGH
                note2 = f"{HIGH} B: {note2}"
            notes.append(f"height 2 {note2}")
        else:
            b2 = b1
            notes.append("height 2: no uplink probe (no racks when it ran); height 1's value")
        out.append(b2)
    out += [out[-1]] * (network_heights(doc["network"]) - len(out))
    return out, "\n".join(notes)


def timeouts_section(samples: list[dict[str, Any]]) -> tuple[list[dict[str, int]] | None, str]:
    """``tcp.timeouts`` from the probes into every port toward a node: per probe that timed
    out, K its senders into a node, M the smallest size from which on every size it measured
    timed out (:func:`timed_out`), and for ``alltoall`` F, the receivers of
    each sender (``host``: any). The all-to-all rule is kept where it times out below the
    ``host`` rule's M (the host rule covers it from there). None where neither probe's
    largest size timed out. Also the comment saying what was seen."""
    probes = timed_out(samples)
    if "host" not in probes:
        raise CommodelError("the ports campaign has no host probe")
    rules: list[dict[str, int]] = []
    seen = []
    for probe in ("host", "alltoall"):
        sizes = probes.get(probe)
        if not sizes:
            continue
        into: dict[int, set[int]] = {}
        out_of: dict[int, set[int]] = {}
        _, flows = next(iter(sizes.values()))  # a probe's flows are the same at every size
        for src, dst in flows:
            into.setdefault(dst, set()).add(src)
            out_of.setdefault(src, set()).add(dst)
        senders = min(len(s) for s in into.values())
        fanout = min(len(d) for d in out_of.values()) if probe == "alltoall" else 1
        size = None
        for m, (out, _) in sorted(sizes.items(), reverse=True):
            if not out:
                break
            size = m
        seen.append(
            f"{probe} ({senders} senders into a node): "
            + ", ".join(f"{m} B {'timeout' if out else 'none'}" for m, (out, _) in sizes.items())
        )
        if size is None or senders < 2 or any(size >= r["size"] for r in rules):
            continue
        rules.append(
            {"senders": senders, "size": size, **({"fanout": fanout} if fanout > 1 else {})}
        )
    what = "; ".join(seen)
    if not rules:
        return None, f"timeouts: none (sizes timed out, half a timeout a round or more: {what})"
    said = "; ".join(
        f"{r['senders']} senders"
        + (f" each sending to {r['fanout']}" if "fanout" in r else "")
        + f" into one node time out from {r['size']} B on"
        for r in rules
    )
    return rules, f"timeouts: {said} (sizes timed out, half a timeout a round or more: {what})"


def through_model(sections: dict[str, Any], comments: dict[str, str], db, camp) -> None:
    """``tcp.timeouts`` from a ports campaign's probes into every port toward a node
    (:func:`timeouts_section`), then
    ``network.buffer`` and ``tcp.rto_rule: buffer``, fitted through ``tcpflow`` with the
    other sections (``commodel fit``); where the platform lacks ``plogp`` or ``network``,
    or buffers were given (``--buffer``), no buffer."""
    samples = db.samples(camp.id)
    found, note = timeouts_section(samples)
    if found is not None:
        sections.setdefault("tcp", {})["timeouts"] = found
    comments["tcp"] = comments.get("tcp", "") + "\n" + note
    if "network" not in sections or "plogp" not in sections or "buffer" in sections["network"]:
        return
    values, note = buffer_section(model_doc(sections), samples)
    if values is None:
        comments["network"] = comments.get("network", "") + "\n" + note
        return
    sections["network"]["buffer"] = values
    comments["network"] = comments.get("network", "") + "\n" + note
    sections.setdefault("tcp", {})["rto_rule"] = "buffer"
    comments["tcp"] = comments.get("tcp", "") + "\nrto_rule buffer: the buffers were measured"


def summary(result: dict[str, Any], db) -> str:
    """What ``measure ports`` prints: per probe and size, the rounds that timed out."""
    lines = [f"campaign {result['campaign']}: ports ({result['nodes']} nodes)"]
    for probe, sizes in timed_out(db.samples(result["campaign"])).items():
        seen = ", ".join(f"{m} B {'timeout' if out else 'none'}" for m, (out, _) in sizes.items())
        lines.append(f"  {probe}: {seen}")
    return "\n".join(lines)
