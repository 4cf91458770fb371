"""PLogP parameters from raw samples (Kielmann, Bal, Verstoep 2000, section 3).

``commodel fit`` recomputes everything from the stored samples; the measurement procedure
(:mod:`commodel.measure.plogp`, whose stopping rules decide which sizes and how many
repetitions) and this fit take g from a saturation run by the same
:func:`commodel.stats.saturation_gap`, so both always agree.

Readings of the paper, documented in ``docs/measurement.md``:

* g(0) by saturation: RTT_n is the time for n messages of m bytes in a row plus one empty
  reply. n is doubled until the gap per message RTT_n/n changes by less than eps and
  RTT_1 < eps * RTT_n, so the reply (and the latency) is less than eps of RTT_n, and
  RTT_n is taken as n*g(0): g(0) = RTT_n/n at the largest n measured. (Subtracting RTT_1
  would remove that bias under the model, but on a loaded machine the difference of two
  noisy values can even turn negative; when the doubling stops at its cap before the rule
  holds, the bias RTT_1/RTT_n is printed with the result.)
* g(m) = RTT(m) - RTT(0) + g(0) and L = (RTT(0) - 2 g(0))/2 (the paper's equations).
* Bimodal round trips (``stats.split_modes``: a gap above the lower group of more than 4
  times its spread and 20% of its top, at least 2 samples in each group) are split: g(m)
  and L come from the normal mode, and the escalated mode (a retransmission timeout or TCP
  loss recovery) is kept per size as its g(m) level and its frequency
  (:attr:`PlogpFit.escalation`), not averaged into the table.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import CommodelError
from ..openmpi import EAGER_LIMIT
from ..stats import central, saturation_gap, split_modes
from ..units import format_duration


@dataclass
class PlogpFit:
    """The fitted PLogP tables of one campaign."""

    L: float
    g0: float
    rtt0: float
    sizes: list[int]
    o_s: list[float]
    o_r: list[float]
    g: list[float]
    g_fast: list[float]
    g_saturation: list[float] | None = None
    g_bidirectional: list[float] | None = None
    g0_bidirectional: float | None = None
    L_bidirectional: float | None = None
    reps: list[int] = field(default_factory=list)
    #: size -> (g(m) of the escalated mode, s; its frequency), where the round trips of a
    #: size are bimodal (unidirectional; the fast method only)
    escalation: dict[int, tuple[float, float]] = field(default_factory=dict)
    escalation_bidirectional: dict[int, tuple[float, float]] = field(default_factory=dict)
    method: str = "fast"
    mode: str = "send"
    ranks: int = 2

    def table1(self) -> dict[str, float]:
        """LogP / LogGP parameters from Kielmann's Table 1 (short message: 1 byte)."""
        return logp_table1(self.sizes, self.o_s, self.o_r, self.g, self.L, self.ranks)


def logp_table1(
    sizes: Sequence[int],
    o_s: Sequence[float],
    o_r: Sequence[float],
    g: Sequence[float],
    L: float,
    P: int,
) -> dict[str, float]:
    """Kielmann Table 1: L = L + g(1) - o_s(1) - o_r(1), o = (o_s(1) + o_r(1))/2, g = g(1),
    G = g(m)/m at the largest m, P = P."""
    if 1 not in sizes:
        raise CommodelError("Table 1 needs the 1-byte measurement (size 1 was not measured)")
    i = list(sizes).index(1)
    big = max(sizes)
    j = list(sizes).index(big)
    return {
        "L": L + g[i] - o_s[i] - o_r[i],
        "o": (o_s[i] + o_r[i]) / 2,
        "g": g[i],
        "G": g[j] / big if big > 0 else 0.0,
        "P": float(P),
    }


def _group(
    samples: list[dict[str, Any]], phase: str, pattern: str
) -> dict[int, dict[str, list[float]]]:
    """size -> quantity -> values, for one phase and pattern."""
    out: dict[int, dict[str, list[float]]] = {}
    for s in samples:
        if s["phase"] == phase and s["pattern"] == pattern:
            out.setdefault(int(s["size_bytes"]), {}).setdefault(s["quantity"], []).append(
                float(s["value_s"])
            )
    return out


def saturation_series(
    samples: list[dict[str, Any]], phase: str, pattern: str, size: int
) -> dict[int, list[float]]:
    """n -> RTT_n values of the saturation steps of one size."""
    out: dict[int, list[float]] = {}
    for s in samples:
        if (
            s["phase"] == phase
            and s["pattern"] == pattern
            and int(s["size_bytes"]) == size
            and s["quantity"] == "rtt_n"
        ):
            out.setdefault(int(s["n_msgs"]), []).append(float(s["value_s"]))
    return out


def gap_from_series(series: dict[int, list[float]], statistic: str) -> float:
    """g from the saturation steps: RTT_1 and the largest n."""
    if 1 not in series or len(series) < 2:
        raise CommodelError("saturation measurement incomplete (needs n = 1 and a larger n)")
    n = max(series)
    return saturation_gap(central(series[n], statistic), n)


def _fast_gaps(
    rt: dict[int, dict[str, list[float]]], sizes: list[int], g0: float, statistic: str
) -> tuple[float, list[float], dict[int, tuple[float, float]]]:
    """RTT(0), the fast g(m) = RTT(m) - RTT(0) + g(0) of the normal mode of every size
    (g(0) itself at 0), and size -> (escalated g(m), frequency) where the round trips of a
    size are bimodal (:func:`~commodel.stats.split_modes`)."""
    normal: dict[int, list[float]] = {}
    escalated: dict[int, list[float]] = {}
    for m in sizes:
        normal[m], escalated[m] = split_modes(rt[m]["rtt"])
    rtt0 = central(normal[0], statistic)
    g = [central(normal[m], statistic) - rtt0 + g0 for m in sizes]
    g[0] = g0
    escalation = {
        m: (central(esc, statistic) - rtt0 + g0, len(esc) / len(rt[m]["rtt"]))
        for m, esc in escalated.items()
        if esc
    }
    return rtt0, g, escalation


def fit_plogp(samples: list[dict[str, Any]], options: dict[str, Any], ranks: int = 2) -> PlogpFit:
    """Fit the PLogP tables from one campaign's samples."""
    statistic = options.get("statistic", "median")
    if not samples:
        raise CommodelError("the plogp campaign has no samples")
    g0 = gap_from_series(saturation_series(samples, "g0", "uni", 0), statistic)
    rt = _group(samples, "roundtrip", "uni")
    if 0 not in rt:
        raise CommodelError("the plogp campaign has no RTT(0) samples")
    sizes = sorted(rt)
    for m in sizes:  # a campaign marked complete may still lack a size's samples
        missing = [q for q in ("rtt", "o_s", "o_r") if not rt[m].get(q)]
        if missing:
            raise CommodelError(
                f"the plogp campaign has no {', '.join(missing)} samples at {m} B; measure it again"
            )
    rtt0, g_fast, escalation = _fast_gaps(rt, sizes, g0, statistic)
    L = (rtt0 - 2 * g0) / 2
    o_s = [central(rt[m]["o_s"], statistic) for m in sizes]
    o_r = [central(rt[m]["o_r"], statistic) for m in sizes]
    reps = [len(rt[m]["rtt"]) for m in sizes]
    fit = PlogpFit(
        L=L,
        g0=g0,
        rtt0=rtt0,
        sizes=sizes,
        o_s=o_s,
        o_r=o_r,
        g=list(g_fast),
        g_fast=g_fast,
        reps=reps,
        escalation=escalation if options.get("method") != "saturation" else {},
        method=options.get("method", "fast"),
        mode=options.get("mode", "send"),
        ranks=ranks,
    )
    if options.get("method") == "saturation":
        gsat = [g0]
        for m in sizes[1:]:
            gsat.append(gap_from_series(saturation_series(samples, "gsat", "uni", m), statistic))
        fit.g_saturation = gsat
        fit.g = list(gsat)
    if options.get("bidirectional"):
        g0b = gap_from_series(saturation_series(samples, "g0", "bi", 0), statistic)
        rb = _group(samples, "roundtrip", "bi")
        if options.get("bidirectional_sizes", "all") == "powers":
            # measured at 0, the powers of two and the largest: the rest in between
            bsizes = [m for m in sizes if m == 0 or not m & (m - 1) or m == sizes[-1]]
        else:
            bsizes = list(sizes)
        missing = [m for m in bsizes if m not in rb]
        if missing:
            raise CommodelError(f"bidirectional roundtrips missing for sizes {missing}")
        rtt0b, gb, fit.escalation_bidirectional = _fast_gaps(rb, bsizes, g0b, statistic)
        fit.g_bidirectional = _interpolate_onto(bsizes, gb, sizes)
        fit.g0_bidirectional = g0b
        fit.L_bidirectional = (rtt0b - 2 * g0b) / 2
    return fit


def _interpolate_onto(xs: list[int], ys: list[float], sizes: list[int]) -> list[float]:
    """ys at xs (increasing), linearly between them, on ``sizes`` (within xs' range)."""
    out = []
    for m in sizes:
        k = min(max(bisect.bisect_left(xs, m), 1), len(xs) - 1)
        x0, x1, y0, y1 = xs[k - 1], xs[k], ys[k - 1], ys[k]
        out.append(y0 if x1 == x0 else y0 + (y1 - y0) * (m - x0) / (x1 - x0))
    return out


def monotone_fit(values: Sequence[float], weights: Sequence[float]) -> list[float]:
    """The weighted least-squares fit of ``values`` by a non-decreasing sequence >= 0.

    g(m) cannot fall as m grows (a larger message never leaves the network sooner) and no
    time is negative; measured values that break this are noise (g(m) = RTT(m) - RTT(0) +
    g(0) is a difference of noisy round trips). Pool-adjacent-violators: neighbours that
    fall are replaced by their weighted mean until the sequence is non-decreasing, which
    is the weighted isotonic regression; the bound 0 then applies to the pooled values
    (for an isotonic fit, max(0, fit) is the constrained least-squares solution)."""
    blocks: list[list[float]] = []  # [weighted mean, total weight, count]
    for v, w in zip(values, weights):
        blocks.append([float(v), float(w), 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            v2, w2, n2 = blocks.pop()
            v1, w1, n1 = blocks.pop()
            blocks.append([(v1 * w1 + v2 * w2) / (w1 + w2), w1 + w2, n1 + n2])
    out: list[float] = []
    for mean, _, count in blocks:
        out.extend([max(0.0, mean)] * count)
    return out


def _weights(fit: PlogpFit) -> list[float]:
    return [float(max(r, 1)) for r in fit.reps] if fit.reps else [1.0] * len(fit.sizes)


def plogp_section(fit: PlogpFit) -> dict[str, Any]:
    """The ``plogp`` section of a platform file (docs/formats.md).

    g(m), the bidirectional g(m), o_s(m) and o_r(m) are written as their non-decreasing,
    non-negative fit (:func:`monotone_fit`, weighted by the repetitions per size): a larger
    message costs no less (the platform loader warns about tables that fall);
    :func:`adjusted_values` lists where that differs from the measured value by more than
    1%. L = RTT(0)/2 - g(0) < 0 (g(0) > RTT(0)/2, e.g. over
    loopback, where the receiver's per-message cost, not the wire, sets the gap) is
    written as 0: with g(0) measured directly, L = 0 is the least-squares fit of RTT(0) =
    2 (L + g(0)) under L >= 0."""
    w = _weights(fit)
    sec: dict[str, Any] = {
        "L": max(0.0, fit.L),
        "sizes": list(fit.sizes),
        "o_s": monotone_fit(fit.o_s, w),
        "o_r": monotone_fit(fit.o_r, w),
        "g": monotone_fit(fit.g, w),
    }
    if fit.escalation:
        sec["escalation"] = escalation_section(fit.escalation)
    if fit.g_bidirectional is not None:
        sec["bidirectional"] = {"g": monotone_fit(fit.g_bidirectional, w)}
        if fit.escalation_bidirectional:
            sec["bidirectional"]["escalation"] = escalation_section(fit.escalation_bidirectional)
    sec["S"] = None
    return sec


def escalation_section(escalation: dict[int, tuple[float, float]]) -> dict[str, list]:
    """``{sizes, level, frequency}``: per size with an escalated mode, its g(m) (s, not
    below 0) and the fraction of the samples in it (docs/formats.md)."""
    sizes = sorted(escalation)
    return {
        "sizes": sizes,
        "level": [max(0.0, escalation[m][0]) for m in sizes],
        "frequency": [escalation[m][1] for m in sizes],
    }


def adjusted_values(fit: PlogpFit, rel: float = 0.01) -> list[str]:
    """The measured values that :func:`plogp_section` writes differently (L < 0; table
    values the monotone fit moves by more than ``rel`` of the written value), as text."""
    out = []
    if fit.L < 0:
        out.append(f"L = {fit.L:.6g} s -> 0")
    w = _weights(fit)
    tables = [("o_s", fit.o_s), ("o_r", fit.o_r), ("g", fit.g)]
    if fit.g_bidirectional is not None:
        tables.append(("bidirectional.g", fit.g_bidirectional))
    for name, values in tables:
        for m, v, f in zip(fit.sizes, values, monotone_fit(values, w)):
            if abs(v - f) > rel * abs(f) and abs(v - f) > 1e-12:
                out.append(f"{name}({m}) = {v:.6g} s -> {f:.6g} s")
    return out


def rendezvous_threshold(mpi_library: str) -> int | None:
    """PLogP's S for the MPI library a campaign ran with (``Campaign.mpi_library``, as
    ``MPI_Get_library_version`` gives it): Open MPI over TCP sends a message of 64 KiB or
    more by rendezvous (its default ``btl_tcp_eager_limit``, headers included), so S =
    64 KiB - 1; None (every message eager) for other libraries."""
    return EAGER_LIMIT - 1 if mpi_library.startswith("Open MPI") else None


def sections(db: Any, camp: Any) -> dict[str, Any]:
    """The ``plogp`` section of a plogp campaign, with its comment (``commodel fit``)."""
    fit = fit_plogp(db.samples(camp.id), camp.options, ranks=camp.ranks)
    out: dict[str, Any] = {"plogp": plogp_section(fit)}
    notes = []
    S = rendezvous_threshold(camp.mpi_library)
    if S is not None:
        out["plogp"]["S"] = S
        notes.append(
            f"S = {S}: Open MPI's TCP eager limit (btl_tcp_eager_limit, 64 KiB with its "
            "headers, its default): from 64 KiB a message waits for its receive (rendezvous)"
        )
    # Kielmann's pair is ranks 0 and 1, one rank a node: tcpflow takes g(m)'s wire part at
    # their route's narrowest link (docs/models.md, tcpflow)
    out["plogp"]["pair"] = [0, 1]
    if 1 in fit.sizes:
        t1 = fit.table1()
        notes.append(
            "LogP/LogGP (Kielmann Table 1): "
            f"L = {t1['L']:.6g} s, o = {t1['o']:.6g} s, g = {t1['g']:.6g} s, "
            f"G = {t1['G']:.6g} s/B, P = {int(t1['P'])}"
        )
    adjusted = adjusted_values(fit)
    if adjusted:
        notes.append(
            "fitted under the model's constraints (o_s, o_r, g non-decreasing in m: weighted "
            "isotonic regression; no time below 0); measured -> written: " + ", ".join(adjusted)
        )
    if notes:
        out["__comment__"] = "\n".join(notes)
    return out


def complete(sections: dict[str, Any], comments: dict[str, str], db: Any, camp: Any) -> None:
    """``network.bucket`` from g(m) and the fitted network (:mod:`commodel.fit.bucket`)."""
    if "plogp" in sections and "network" in sections:
        from .bucket import bucket

        value, note = bucket(sections["plogp"], sections["network"])
        if value is not None:
            sections["network"]["bucket"] = value
        comments["network"] = comments.get("network", "") + "\n" + note


def summary(result: dict[str, Any], db: Any) -> str:
    """What ``measure plogp`` prints: the PLogP table, Table 1 (LogP/LogGP) and Table 2
    (phase times)."""
    camp = db.campaign(result["campaign"])
    fit = fit_plogp(db.samples(camp.id), camp.options, ranks=camp.ranks)
    lines = [
        f"campaign {result['campaign']}: PLogP, mode {fit.mode}, method {fit.method}, "
        f"{result['steps_measured']} steps measured, {result['steps_replayed']} replayed",
        f"L = {format_duration(fit.L)}   g(0) = {format_duration(fit.g0)}   "
        f"RTT(0) = {format_duration(fit.rtt0)}",
        "",
    ]
    head = f"{'m [B]':>10} {'reps':>4} {'o_s [us]':>10} {'o_r [us]':>10} {'g [us]':>10}"
    if fit.g_saturation is not None:
        head += f" {'g_fast [us]':>11} {'g_sat [us]':>10}"
    if fit.g_bidirectional is not None:
        head += f" {'g_bi [us]':>10}"
    lines.append(head)
    for i, m in enumerate(fit.sizes):
        row = (
            f"{m:>10} {fit.reps[i]:>4} {fit.o_s[i] * 1e6:>10.3f} {fit.o_r[i] * 1e6:>10.3f} "
            f"{fit.g[i] * 1e6:>10.3f}"
        )
        if fit.g_saturation is not None:
            row += f" {fit.g_fast[i] * 1e6:>11.3f} {fit.g_saturation[i] * 1e6:>10.3f}"
        if fit.g_bidirectional is not None:
            row += f" {fit.g_bidirectional[i] * 1e6:>10.3f}"
        lines.append(row)
    if 1 in fit.sizes:
        t1 = fit.table1()
        lines += [
            "",
            "LogP/LogGP (Kielmann Table 1): "
            f"L = {format_duration(t1['L'])}, o = {format_duration(t1['o'])}, "
            f"g = {format_duration(t1['g'])}, G = {t1['G']:.4g} s/B, P = {int(t1['P'])}",
        ]
    times = result["phase_times"]
    if times:
        lines += ["", "phase times (Kielmann Table 2):"]
        for phase, t in times.items():
            lines.append(f"  {phase:<14} {t:10.3f} s")
    return "\n".join(lines)
