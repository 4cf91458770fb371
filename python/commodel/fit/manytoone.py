"""Many-to-one escalation statistics (Lastovetsky & O'Flynn, sections 4.3 and 5).

From the sweep of sizes M and process counts n (root + n-1 senders):

1. **Linear model** per n: a line T_lin(n, M) = a_n + b_n M through the normal (not
   escalated) time at every M (:func:`low_mode`: the median of the normal mode of the
   repetitions within ``escalation_factor`` of the fastest), fitted robustly (points more
   than ``escalation_factor`` times or more than min_excess above the line are dropped and
   the line refitted, until nothing changes).
2. **Escalated samples**: t - T_lin(n, M) > min_excess (RTO_min / 4 when the database has
   a tcp campaign, :func:`with_rto_excess`; 1 ms without) and either t >
   escalation_factor * T_lin(n, M) (default 3) or t in the escalated mode of its (n, M)
   repetitions (:func:`commodel.stats.split_modes`; this finds an escalation of 200 ms on
   a normal time of 150 ms, which the factor misses), or the normal mode itself more than
   min_excess above the line (every repetition escalated: 15 senders of 64 KiB on
   two-rack-16, 252 ms on a line of 148 ms).
3. **M1(n)**: the smallest M with an escalated sample; **Mc(n)**: the smallest M from which
   every sample of every larger M is escalated (null if never); **M2**: the smallest
   measured M above the largest escalated M of any n (null if escalations reach the
   largest size, or never occur).
4. **Levels**: the escalated times sorted and split where one is more than ``level_gap``
   (15%) above the previous one (a 1-D clustering); each level's value t_i is its median.
5. **f_i(n, M)**: the fraction of samples at level i per (n, M), as a bicubic (or lower
   degree, when there are few n or M) interpolating B-spline surface
   (scipy.interpolate.RectBivariateSpline), stored as knots and coefficients; evaluate it
   with :func:`escalation_probability` (clipped to [0, 1]).
6. **kappa_1, kappa_2** need the LMO constants (an ``lmo`` campaign in the same database):
   kappa_1 from the slopes b_n = t_0 + 1/beta_0 + kappa_1 sum_{i<n} t_i (least squares
   over n); kappa_2 from the times above M2: T - C_0 - t_0 M - M/beta_0 =
   kappa_2 sum_{s<n} (C_s + t_s M). 1/beta_0 is the mean of 1/beta_s0 over the senders.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import CommodelError
from ..stats import central, split_modes

DEFAULT_FACTOR = 3.0
DEFAULT_MIN_EXCESS = 1e-3
# With RTO_min known (a tcp campaign), min_excess is this share of it: above the 20-45 ms
# excursions of the emulated two-rack-16 (not timeouts: they do not stop at the eager
# limit), below the 200 ms timeouts (docs/measurement.md).
RTO_SHARE = 0.25
DEFAULT_LEVEL_GAP = 0.15


def robust_line(
    sizes: list[int], values: list[float], factor: float, max_excess: float = math.inf
) -> tuple[float, float]:
    """A line through the non-escalated points: a repeated-median start (Siegel: for each
    point the median of its slopes to the others, then the median of those; it stands
    while fewer than half the points are escalated, where a plain median of all pairwise
    slopes already tips when the largest of four sizes escalates), then least squares over
    the points at most ``factor`` times and at most ``max_excess`` above the line, repeated
    until that set no longer changes. ``max_excess`` keeps out a size whose every
    repetition escalated by less than ``factor`` times its normal time (on two-rack-16,
    15 senders of 64 KiB: 252 ms, normal 157 ms), which the factor alone let tip the line
    through it, so that none of its escalations counted."""
    x = np.asarray(sizes, dtype=float)
    y = np.asarray(values, dtype=float)
    if len(x) == 1:
        return float(y[0]), 0.0
    b = float(
        np.median(
            [
                np.median([(y[j] - y[i]) / (x[j] - x[i]) for j in range(len(x)) if j != i])
                for i in range(len(x))
            ]
        )
    )
    a = float(np.median(y - b * x))
    keep = None
    for _ in range(len(x) + 1):
        line = a + b * x
        new_keep = (y <= factor * np.maximum(line, 1e-12)) & (y - line <= max_excess)
        if keep is not None and (new_keep == keep).all():
            break
        keep = new_keep
        if keep.sum() >= 2:
            A = np.vstack([np.ones(int(keep.sum())), x[keep]]).T
            (a, b), *_ = np.linalg.lstsq(A, y[keep], rcond=None)
            a, b = float(a), float(b)
    return a, b


def low_mode(times: list[float], factor: float) -> float:
    """The central time of the repetitions that were not escalated: the median of the normal
    mode (:func:`~commodel.stats.split_modes`) of those within ``factor`` of the fastest. An
    escalation only adds time, so the fastest repetitions are the normal ones however many
    others escalated (a fixed percentile, such as the 25th, is itself escalated once more
    than 75% are); the split keeps escalations of less than ``factor`` times the normal
    time out of the median."""
    fastest = min(times)
    normal, _ = split_modes([t for t in times if t <= factor * fastest])
    return float(np.median(normal))


def escalated(times: list[float], pred: float, factor: float, min_excess: float) -> list[float]:
    """The escalated ones of the repetitions ``times`` of one (n, M) whose line gives
    ``pred``: more than ``min_excess`` above it, and more than ``factor`` times it or in the
    escalated mode of ``times`` (:func:`~commodel.stats.split_modes`); where even the normal
    mode (:func:`low_mode`) is more than ``min_excess`` above the line, every repetition
    escalated and has no normal mode, so each one that far above counts."""
    upper = split_modes(times)[1]
    cut = min(upper) if upper else math.inf
    if low_mode(times, factor) - pred > min_excess:
        cut = -math.inf
    return [t for t in times if (t > factor * pred or t >= cut) and t - pred > min_excess]


def cluster_levels(values: list[float], gap: float = DEFAULT_LEVEL_GAP) -> list[list[float]]:
    """1-D clustering: sorted values split where the next is more than ``gap`` above."""
    out: list[list[float]] = []
    for v in sorted(values):
        if out and v <= out[-1][-1] * (1.0 + gap):
            out[-1].append(v)
        else:
            out.append([v])
    return out


def level_of(value: float, levels: list[list[float]]) -> int:
    """1-based index of the cluster holding ``value`` (nearest by log distance)."""
    best, best_d = 0, math.inf
    for i, cl in enumerate(levels):
        lo, hi = cl[0], cl[-1]
        d = 0.0 if lo <= value <= hi else min(abs(math.log(value / lo)), abs(math.log(value / hi)))
        if d < best_d:
            best, best_d = i, d
    return best + 1


def spline_surface(ns: list[int], sizes: list[int], F: np.ndarray) -> dict[str, Any]:
    """An interpolating B-spline surface through F[n index][size index]."""
    from scipy.interpolate import RectBivariateSpline

    x = [float(n) for n in ns]
    Z = np.asarray(F, dtype=float)
    if len(x) == 1:  # one process count: constant in n
        x = [x[0], x[0] + 1.0]
        Z = np.vstack([Z, Z])
    y = [float(m) for m in sizes]
    if len(y) == 1:
        y = [y[0], y[0] + 1.0]
        Z = np.hstack([Z, Z])
    kx, ky = min(3, len(x) - 1), min(3, len(y) - 1)
    spl = RectBivariateSpline(x, y, Z, kx=kx, ky=ky, s=0)
    tx, ty, c = spl.tck
    return {
        "kx": int(kx),
        "ky": int(ky),
        "n_knots": [float(v) for v in tx],
        "M_knots": [float(v) for v in ty],
        "coefficients": [float(v) for v in c],
    }


def escalation_probability(surface: dict[str, Any], n: float, M: float) -> float:
    """f_i(n, M) from a stored surface, clipped to [0, 1]."""
    from scipy.interpolate import bisplev

    tck = (
        np.asarray(surface["n_knots"]),
        np.asarray(surface["M_knots"]),
        np.asarray(surface["coefficients"]),
        int(surface["kx"]),
        int(surface["ky"]),
    )
    return float(min(1.0, max(0.0, bisplev(float(n), float(M), tck))))


def _table(samples: list[dict[str, Any]], phase: str) -> dict[int, dict[int, list[float]]]:
    out: dict[int, dict[int, list[float]]] = {}
    for s in samples:
        if s["phase"] == phase and s["quantity"] == "time":
            out.setdefault(int(s["n_ranks"]), {}).setdefault(int(s["size_bytes"]), []).append(
                float(s["value_s"])
            )
    return out


def fit_many_to_one(
    samples: list[dict[str, Any]], options: dict[str, Any], lmo: Any = None
) -> dict[str, Any]:
    """The ``many_to_one`` section from a many-to-one sweep (see the module docstring)."""
    factor = float(options.get("escalation_factor", DEFAULT_FACTOR))
    min_excess = float(options.get("min_excess", DEFAULT_MIN_EXCESS))
    gap = float(options.get("level_gap", DEFAULT_LEVEL_GAP))
    table = _table(samples, "many-to-one")
    if not table:
        raise CommodelError("the many-to-one campaign has no samples")
    ns = sorted(table)
    sizes = sorted({m for by in table.values() for m in by})
    lines: dict[int, tuple[float, float]] = {}
    escalated_at: dict[int, dict[int, list[float]]] = {}
    for n in ns:
        ms = sorted(table[n])
        lows = [low_mode(table[n][m], factor) for m in ms]
        a, b = robust_line(ms, lows, factor, min_excess)
        lines[n] = (a, b)
        for m in ms:
            pred = max(a + b * m, 1e-12)
            escalated_at.setdefault(n, {})[m] = escalated(table[n][m], pred, factor, min_excess)
    all_esc = [t for by in escalated_at.values() for ts in by.values() for t in ts]
    levels = cluster_levels(all_esc, gap)
    M1: list[int | None] = []
    Mc: list[int | None] = []
    for n in ns:
        ms = sorted(table[n])
        esc_ms = [m for m in ms if escalated_at[n][m]]
        M1.append(esc_ms[0] if esc_ms else None)
        # Mc: every size from Mc up to the largest escalated one is escalated every time
        mc = None
        for m in reversed(esc_ms[-1:] and [x for x in ms if x <= esc_ms[-1]]):
            if len(escalated_at[n][m]) != len(table[n][m]):
                break
            mc = m
        Mc.append(mc)
    max_esc = max((m for n in ns for m in table[n] if escalated_at[n][m]), default=None)
    M2 = None
    if max_esc is not None:
        above = [m for m in sizes if m > max_esc]
        M2 = above[0] if above else None
    surfaces = []
    for i in range(1, len(levels) + 1):
        F = np.zeros((len(ns), len(sizes)))
        for a_i, n in enumerate(ns):
            for b_i, m in enumerate(sizes):
                ts = table[n].get(m, [])
                if ts:
                    hits = sum(1 for t in escalated_at[n].get(m, []) if level_of(t, levels) == i)
                    F[a_i, b_i] = hits / len(ts)
        surfaces.append(spline_surface(ns, sizes, F))
    sec: dict[str, Any] = {
        "root": 0,
        "n": ns,
        "sizes": sizes,
        "linear": {
            "intercept": [lines[n][0] for n in ns],
            "slope": [lines[n][1] for n in ns],
        },
        "M1": M1,
        "Mc": Mc,
        "M2": M2,
        "levels": [float(np.median(cl)) for cl in levels],
        "probability": surfaces,
        "kappa_1": None,
        "kappa_2": None,
        "escalation_factor": factor,
        "min_excess": min_excess,
        # how the root received; campaigns from before the option posted every receive
        "receives": options.get("receives") or "posted",
    }
    if lmo is not None:
        sec["kappa_1"], sec["kappa_2"] = kappas(lmo, ns, lines, table, M2)
    return sec


def _inv_beta0(lmo: Any, senders: range) -> float | None:
    inv = [1.0 / lmo.beta[s][0] for s in senders if lmo.beta[s][0]]
    return float(np.mean(inv)) if inv else None


def kappas(lmo, ns, lines, table, M2) -> tuple[float | None, float | None]:
    """kappa_1 and kappa_2 from the LMO constants (see the module docstring)."""
    nodes = len(lmo.C)
    if max(ns) > nodes:
        return None, None
    inv_b0 = _inv_beta0(lmo, range(1, max(ns)))
    if inv_b0 is None:
        return None, None
    t0, C0 = lmo.t[0], lmo.C[0]
    xs, ys = [], []
    for n in ns:
        xs.append(sum(lmo.t[1:n]))
        ys.append(lines[n][1] - t0 - inv_b0)
    sxx = sum(x * x for x in xs)
    k1 = sum(x * y for x, y in zip(xs, ys)) / sxx if sxx > 0 else None
    k2 = None
    if M2 is not None:
        xs2, ys2 = [], []
        for n in ns:
            for m, ts in table[n].items():
                if m >= M2:
                    xs2.append(sum(lmo.C[s] + lmo.t[s] * m for s in range(1, n)))
                    ys2.append(central(ts, "median") - C0 - t0 * m - m * inv_b0)
        sxx2 = sum(x * x for x in xs2)
        k2 = sum(x * y for x, y in zip(xs2, ys2)) / sxx2 if sxx2 > 0 else None
    return k1, k2


def fit_one_to_many(
    samples: list[dict[str, Any]], options: dict[str, Any], lmo: Any = None
) -> dict[str, Any]:
    """Median one-to-many times per (n, M) and the threshold S (LMO section 4.2).

    S is the smallest measured M from which the time is nearer to the serialised
    prediction (sum over destinations) than to the parallel one (max); it needs the LMO
    constants and is null without them."""
    table = _table(samples, "one-to-many")
    if not table:
        raise CommodelError("the one-to-many campaign has no samples")
    ns = sorted(table)
    sizes = sorted({m for by in table.values() for m in by})
    times = [[central(table[n][m], "median") if m in table[n] else None for m in sizes] for n in ns]
    S = None
    if lmo is not None and max(ns) <= len(lmo.C):
        inv_b0 = _inv_beta0(lmo, range(1, max(ns)))
        if inv_b0 is not None:
            for j, m in enumerate(sizes):
                votes = 0
                for i, n in enumerate(ns):
                    if times[i][j] is None:
                        continue
                    per = [lmo.C[d] + lmo.t[d] * m + m * inv_b0 for d in range(1, n)]
                    base = lmo.C[0] + lmo.t[0] * (n - 1) * m
                    par, ser = base + max(per), base + sum(per)
                    votes += 1 if abs(times[i][j] - ser) < abs(times[i][j] - par) else -1
                if votes > 0:
                    S = m
                    break
    return {"n": ns, "sizes": sizes, "time": times, "S": S}


def plot_points(samples: list[dict[str, Any]], sec: dict[str, Any]) -> list[tuple]:
    """(n, M, t, level) for every many-to-one sample (level 0: not escalated), told apart
    as :func:`fit_many_to_one` does."""
    lines = dict(zip(sec["n"], zip(sec["linear"]["intercept"], sec["linear"]["slope"])))
    clusters = [[v] for v in sec["levels"]]
    out = []
    for n, by_size in _table(samples, "many-to-one").items():
        a, b = lines[n]
        for m, times in by_size.items():
            pred = max(a + b * m, 1e-12)
            esc = escalated(times, pred, sec["escalation_factor"], sec["min_excess"])
            for t in times:
                level = level_of(t, clusters) if t in esc and clusters else 0
                out.append((n, m, t, level))
    return out


def _lmo_of(db) -> Any:
    """The LMO fit of the latest complete lmo campaign of the database, if any."""
    from .lmo import fit_lmo

    c = _latest_complete(db, "lmo")
    return fit_lmo(db.samples(c.id), c.options, c.ranks) if c else None


def _latest_complete(db, benchmark: str) -> Any:
    camps = [c for c in db.campaigns() if c.benchmark == benchmark and c.status == "complete"]
    return camps[-1] if camps else None


def with_rto_excess(db, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with ``min_excess`` = RTO_min / 4 (:data:`RTO_SHARE`) when the database
    holds a complete tcp campaign and the options do not set it: an escalation is a TCP
    retransmission timeout, which costs at least RTO_min."""
    from .tcp import tcp_section

    camp = None if "min_excess" in options else _latest_complete(db, "tcp")
    if camp is None:
        return options
    section, _note = tcp_section(db.samples(camp.id))
    return {**options, "min_excess": RTO_SHARE * section["rto"]}


def sections(db, camp) -> dict[str, Any]:
    """The ``many_to_one`` section of a many-to-one campaign, or its ``one_to_many`` part
    of a one-to-many campaign (``commodel fit`` merges the two)."""
    if camp.benchmark == "one-to-many":
        return {
            "many_to_one": {
                "one_to_many": fit_one_to_many(db.samples(camp.id), camp.options, _lmo_of(db))
            }
        }
    options = with_rto_excess(db, dict(camp.options))
    return {"many_to_one": fit_many_to_one(db.samples(camp.id), options, _lmo_of(db))}


def summary(result: dict[str, Any], db) -> str:
    """What ``measure many-to-one`` prints (a line per n and the escalation levels), or
    ``measure one-to-many`` (the times per M and n); fitted without the LMO constants."""
    camp = db.campaign(result["campaign"])
    samples = db.samples(camp.id)
    lines = [f"campaign {result['campaign']}: {result['direction']}"]
    if result["direction"] == "one-to-many":
        fit = fit_one_to_many(samples, camp.options)
        lines.append(
            f"{'M [B]':>10} " + " ".join(f"{'n=' + str(n) + ' [ms]':>12}" for n in fit["n"])
        )
        for j, m in enumerate(fit["sizes"]):
            cells = " ".join(
                f"{fit['time'][i][j] * 1e3:>12.3f}" if fit["time"][i][j] is not None else " " * 12
                for i in range(len(fit["n"]))
            )
            lines.append(f"{m:>10} {cells}")
        return "\n".join(lines)
    fit = fit_many_to_one(samples, with_rto_excess(db, camp.options))
    for i, n in enumerate(fit["n"]):
        lines.append(
            f"n={n}: linear {fit['linear']['intercept'][i] * 1e6:.1f} us + "
            f"{fit['linear']['slope'][i] * 1e9:.3f} ns/B; M1 = {fit['M1'][i]}, Mc = {fit['Mc'][i]}"
        )
    levels = ", ".join(f"{t * 1e3:.1f} ms" for t in fit["levels"]) or "none"
    lines.append(f"M2 = {fit['M2']}; escalation levels: {levels}")
    return "\n".join(lines)
