"""LMO point-to-point constants C_i, t_i, beta_ij from pair and triple roundtrips.

For every experiment (root -> destinations) the central roundtrip time per size gives a
line a + s M (least squares over the sizes). Then, with the model of measure/lmo.py:

* pairs:   a_ij = 2 (C_i + C_j)                s_ij = t_i + t_j + 1/beta_ij
* triples: s_i(jk) = t_i + max(s_ij, s_ik)     (2 t_i + max(t_j + 1/beta_ij, t_k + 1/beta_ik))

C solves the overdetermined linear system C_i + C_j = a_ij / 2 over all ordered pairs
(numpy least squares; unique for 3 or more nodes); t_i is the least-squares solution of
t_i = s_i(jk) - max(s_ij, s_ik) over the triples rooted at i; 1/beta_ij =
(s_ij + s_ji)/2 - t_i - t_j. A non-positive 1/beta_ij (noise larger than the link's share)
is written as null: the link is then not the bottleneck at the measured precision.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import CommodelError
from ..stats import central


@dataclass
class LmoFit:
    C: list[float]
    t: list[float]
    beta: list[list[float | None]]  # bytes/s, None on the diagonal and where not resolved
    pair_intercepts: dict[tuple[int, int], float]
    pair_slopes: dict[tuple[int, int], float]


def line(sizes: list[int], values: list[float]) -> tuple[float, float]:
    """Least-squares intercept and slope of values against sizes."""
    x = np.asarray(sizes, dtype=float)
    y = np.asarray(values, dtype=float)
    A = np.vstack([np.ones_like(x), x]).T
    (a, s), *_ = np.linalg.lstsq(A, y, rcond=None)
    return float(a), float(s)


def solve(
    nodes: int,
    pairs: dict[tuple[int, int], tuple[float, float]],
    triples: dict[tuple[int, int, int], float],
) -> LmoFit:
    """C, t, beta from pair lines (i, j) -> (a_ij, s_ij) and triple slopes (i, j, k) -> s."""
    if nodes < 3:
        raise CommodelError(f"LMO needs at least 3 nodes, got {nodes}")
    rows, rhs = [], []
    for (i, j), (a, _) in sorted(pairs.items()):
        row = np.zeros(nodes)
        row[i] += 1
        row[j] += 1
        rows.append(row)
        rhs.append(a / 2)
    if not rows:
        raise CommodelError("no pair experiments")
    C, *_ = np.linalg.lstsq(np.array(rows), np.array(rhs), rcond=None)
    slope = {k: v[1] for k, v in pairs.items()}

    def s(i: int, j: int) -> float:
        vals = [slope[p] for p in ((i, j), (j, i)) if p in slope]
        if not vals:
            raise CommodelError(f"no pair experiment between ranks {i} and {j}")
        return float(np.mean(vals))

    t = np.zeros(nodes)
    for i in range(nodes):
        est = [v - max(s(i, j), s(i, k)) for (r, j, k), v in sorted(triples.items()) if r == i]
        if not est:
            raise CommodelError(f"no triple experiment rooted at rank {i}")
        t[i] = float(np.mean(est))
    beta: list[list[float | None]] = []
    for i in range(nodes):
        row_b: list[float | None] = []
        for j in range(nodes):
            if i == j:
                row_b.append(None)
                continue
            inv = s(i, j) - t[i] - t[j]
            row_b.append(1.0 / inv if inv > 0 else None)
        beta.append(row_b)
    return LmoFit(
        C=[float(c) for c in C],
        t=[float(x) for x in t],
        beta=beta,
        pair_intercepts={k: v[0] for k, v in pairs.items()},
        pair_slopes=slope,
    )


def fit_lmo(samples: list[dict[str, Any]], options: dict[str, Any], nodes: int) -> LmoFit:
    statistic = options.get("statistic", "median")
    groups: dict[tuple[int, ...], dict[int, list[float]]] = {}
    for smp in samples:
        if smp["phase"] != "lmo":
            continue
        dsts = tuple(smp["extra"]["dsts"])
        key = (int(smp["src"]), *dsts)
        groups.setdefault(key, {}).setdefault(int(smp["size_bytes"]), []).append(
            float(smp["value_s"])
        )
    pairs: dict[tuple[int, int], tuple[float, float]] = {}
    triples: dict[tuple[int, int, int], float] = {}
    for key, by_size in sorted(groups.items()):
        sizes = sorted(by_size)
        if len(sizes) < 2:
            raise CommodelError(f"experiment {key[0]}->{list(key[1:])} has fewer than 2 sizes")
        a, sl = line(sizes, [central(by_size[m], statistic) for m in sizes])
        if len(key) == 2:
            pairs[(key[0], key[1])] = (a, sl)
        else:
            triples[(key[0], key[1], key[2])] = sl
    return solve(nodes, pairs, triples)


def lmo_section(fit: LmoFit) -> dict[str, Any]:
    """The ``lmo`` platform section; C and t below 0 (noise) are written as 0."""
    return {
        "C": [max(0.0, c) for c in fit.C],
        "t": [max(0.0, t) for t in fit.t],
        "beta": fit.beta,
    }


def format_table(fit: LmoFit, hosts: list[str] | None = None) -> str:
    lines = [f"{'rank':>4} {'host':<12} {'C_i [us]':>10} {'t_i [ns/B]':>11}"]
    for i, (c, t) in enumerate(zip(fit.C, fit.t)):
        host = hosts[i] if hosts else ""
        lines.append(f"{i:>4} {host:<12} {c * 1e6:>10.3f} {t * 1e9:>11.4f}")
    lines.append("beta_ij [MB/s] (row i sends to column j; - : not resolved):")
    for i, row in enumerate(fit.beta):
        cells = ["    " if b is None and i == j else (f"{b / 1e6:>9.1f}" if b else "        -")
                 for j, b in enumerate(row)]  # fmt: skip
        lines.append(f"{i:>4} " + " ".join(cells))
    return "\n".join(lines)


def summary(result: dict[str, Any], db) -> str:
    """What ``measure lmo`` prints: C_i, t_i and beta_ij."""
    camp = db.campaign(result["campaign"])
    fit = fit_lmo(db.samples(camp.id), camp.options, camp.ranks)
    head = f"campaign {result['campaign']}: LMO point-to-point constants\n"
    return head + format_table(fit, result["hosts"])


def sections(db, camp) -> dict[str, Any]:
    """The ``lmo`` section of an lmo campaign (``commodel fit``)."""
    return {"lmo": lmo_section(fit_lmo(db.samples(camp.id), camp.options, camp.ranks))}
