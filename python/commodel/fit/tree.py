"""PlogPT binary-tree parameters b(h), d(h) and the switch heights (Nomura et al. 2007).

* b(h): per repetition, the sum over the flows of bytes / receive time, divided by the
  number of height-h subtrees (P / 2^h), and for the bidirectional pattern by 2 (per
  direction); the central value over repetitions. PlogPT treats b(h+1) > 2 b(h) as
  b(h+1) = 2 b(h) (the flow at height h+1 never exceeds twice that at h); the fit applies
  that cap.
* d(h): central ping-pong time under load minus without load (bidirectional: half), not
  below 0.
* Switch heights: P_S(h, h+1) (eq. 5) holds when
  (log(2 b(h) / b(h+1)))^2 + (log(d(h) / d(h+1)))^2 > eps_S; a switch is inferred between
  h and h+1 then. d values below 1 us are taken as 1 us in the logarithm: below that a
  ping-pong difference is noise, and a ratio of two near-zero delays means nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..errors import CommodelError
from ..stats import central

EPS_S_DEFAULT = 0.05
D_FLOOR = 1e-6  # s: d(h) below this is noise for P_S


@dataclass
class TreeFit:
    nodes: int
    uni: dict[str, list[float]]
    bi: dict[str, list[float]] | None
    raw_b: dict[str, list[float]]

    def switch_heights(self, eps_s: float = EPS_S_DEFAULT, pattern: str = "uni") -> list[int]:
        levels = self.uni if pattern == "uni" else self.bi
        if levels is None:
            return []
        return switch_heights(levels["b"], levels["d"], eps_s)


def p_s(b_h: float, d_h: float, b_h2: float, d_h2: float, dh: int, eps_s: float) -> bool:
    """PlogPT eq. 5 for heights h and h' = h + dh."""
    floor = D_FLOOR
    x = math.log((2**dh) * b_h / b_h2)
    y = math.log(max(d_h, floor) / max(d_h2, floor))
    return x * x + y * y > eps_s


def switch_heights(b: list[float], d: list[float], eps_s: float = EPS_S_DEFAULT) -> list[int]:
    """Heights h+1 (2..D) whose intermediate node is a switch boundary: P_S(h, h+1) holds.

    Height 1 always holds a switch (the leaves' own links meet there)."""
    out = [1] if b else []
    for h in range(1, len(b)):
        if p_s(b[h - 1], d[h - 1], b[h], d[h], 1, eps_s):
            out.append(h + 1)
    return out


def fit_tree(samples: list[dict[str, Any]], options: dict[str, Any]) -> TreeFit:
    statistic = options.get("statistic", "median")
    nodes = max((int(s["n_ranks"]) for s in samples), default=0)
    if nodes < 2:
        raise CommodelError("the tree campaign has no samples")
    depth = nodes.bit_length() - 1
    levels: dict[str, dict[str, list[float]]] = {}
    raw: dict[str, list[float]] = {}
    patterns = ["uni", "bi"] if options.get("bidirectional", True) else ["uni"]
    for pattern in patterns:
        b_list, d_list = [], []
        for h in range(1, depth + 1):
            phase = f"h={h}"
            bursts: dict[int, float] = {}
            for s in samples:
                if s["phase"] == phase and s["pattern"] == pattern and s["quantity"] == "burst":
                    bw = int(s["size_bytes"]) * int(s["n_msgs"]) / float(s["value_s"])
                    bursts[int(s["repetition"])] = bursts.get(int(s["repetition"]), 0.0) + bw
            if not bursts:
                raise CommodelError(f"no {pattern} burst samples at height {h}")
            per_subtree = [
                v / (nodes >> h) / (2 if pattern == "bi" else 1) for v in bursts.values()
            ]
            b_list.append(central(sorted(per_subtree), statistic))
            load = [
                float(s["value_s"])
                for s in samples
                if s["phase"] == phase and s["pattern"] == pattern and s["quantity"] == "pingpong"
            ]
            idle = [
                float(s["value_s"])
                for s in samples
                if s["phase"] == phase and s["pattern"] == "idle" and s["quantity"] == "pingpong"
            ]
            if not load or not idle:
                raise CommodelError(f"ping-pong samples missing at height {h}")
            diff = central(load, statistic) - central(idle, statistic)
            d_list.append(max(0.0, diff / 2 if pattern == "bi" else diff))
        raw[pattern] = list(b_list)
        for i in range(1, len(b_list)):
            b_list[i] = min(b_list[i], 2 * b_list[i - 1])
        levels[pattern] = {"b": b_list, "d": d_list}
    return TreeFit(nodes=nodes, uni=levels["uni"], bi=levels.get("bi"), raw_b=raw)


def network_section(fit: TreeFit) -> dict[str, Any]:
    sec: dict[str, Any] = {
        "topology": "binary-tree",
        "nodes": fit.nodes,
        "unidirectional": {"b": fit.uni["b"], "d": fit.uni["d"]},
    }
    if fit.bi is not None:
        sec["bidirectional"] = {"b": fit.bi["b"], "d": fit.bi["d"]}
    return sec


def format_table(fit: TreeFit) -> str:
    """PlogPT Table II: d(h) and b(h)/2^(h-1) per height, uni- and bidirectional."""
    lines = [
        f"{'h':>3} | {'d(h) [us]':>10} {'b(h)/2^(h-1) [Mbps]':>20} | "
        f"{'2d(h) [us]':>10} {'b(h)/2^(h-1) [Mbps]':>20}",
    ]
    for i in range(len(fit.uni["b"])):
        h = i + 1
        row = f"{h:>3} | {fit.uni['d'][i] * 1e6:>10.1f} {fit.uni['b'][i] / 2**i * 8 / 1e6:>20.1f} |"
        if fit.bi is not None:
            row += f" {2 * fit.bi['d'][i] * 1e6:>10.1f} {fit.bi['b'][i] / 2**i * 8 / 1e6:>20.1f}"
        lines.append(row)
    sw = fit.switch_heights()
    lines.append(f"switches inferred at heights {sw} (P_S, PlogPT eq. 5, eps_S = {EPS_S_DEFAULT})")
    return "\n".join(lines)


def summary(result: dict[str, Any], db) -> str:
    """What ``measure tree`` prints: the fitted b(h), d(h) and the switches inferred."""
    camp = db.campaign(result["campaign"])
    fit = fit_tree(db.samples(camp.id), camp.options)
    head = f"campaign {result['campaign']}: binary tree of {result['ranks']} nodes\n"
    return head + format_table(fit)


def sections(db, camp) -> dict[str, Any]:
    """The ``network`` section (a binary tree) of a tree campaign (``commodel fit``)."""
    fit = fit_tree(db.samples(camp.id), camp.options)
    return {
        "network": network_section(fit),
        "__comment__": f"switch boundaries at heights {fit.switch_heights()} "
        f"(P_S, PlogPT eq. 5, eps_S = {EPS_S_DEFAULT})",
    }
