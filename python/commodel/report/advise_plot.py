"""Plot of ``commodel advise``: predicted time against message size per algorithm, one panel
per communicator size, with the size range where each algorithm is chosen shaded in its
colour (matplotlib, Agg backend; imported only when drawing)."""

from __future__ import annotations

from typing import Any

from .measure_plots import _pyplot, _save


def plot_advice(adv: Any, path: str) -> None:
    plt = _pyplot()
    ranks = sorted({pt.ranks for pt in adv.points})
    fig, axes = plt.subplots(len(ranks), 1, figsize=(7, 3.6 * len(ranks)), squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    numbers = [n for n, _a, g in _algorithms(adv) if g]
    colour = {n: colours[i % len(colours)] for i, n in enumerate(numbers)}
    for ax, p in zip(axes[:, 0], ranks):
        pts = sorted((pt for pt in adv.points if pt.ranks == p), key=lambda q: q.size)
        sizes = [max(pt.size, 1) for pt in pts]
        for n, name, gen in _algorithms(adv):
            if gen is None:
                continue
            xs = [s for s, pt in zip(sizes, pts) if _time(pt, n) is not None]
            ys = [_time(pt, n) * 1e3 for pt in pts if _time(pt, n) is not None]
            if xs:
                ax.plot(xs, ys, marker="o", ms=3, color=colour[n], label=f"{n} {name}")
        # gather: Lastovetsky's split where the advice proposes it (not in rules)
        _plot_split(ax, [(s, pt.split.time_s) for s, pt in zip(sizes, pts) if pt.split])
        # shade each size's region (geometric midpoints between sizes) in the chosen's colour
        for i, pt in enumerate(pts):
            best = pt.choice(adv.min_gain)
            if best is None:
                continue
            lo = (sizes[i - 1] * sizes[i]) ** 0.5 if i else sizes[i] / 1.41
            hi = (sizes[i] * sizes[i + 1]) ** 0.5 if i + 1 < len(sizes) else sizes[i] * 1.41
            ax.axvspan(lo, hi, color=colour[best.number], alpha=0.12, lw=0)
        title = f"{adv.collective}, P = {p}, {adv.platform}, model {adv.model}"
        _finish(ax, "predicted time [ms]", title)
    _save(fig, path)
    plt.close(fig)


def _algorithms(adv: Any) -> list[tuple[int, str, Any]]:
    from ..openmpi import ALGORITHMS

    return ALGORITHMS[adv.collective]


def _time(pt: Any, number: int) -> float | None:
    for c in pt.candidates:
        if c.number == number:
            return c.time_s
    return None


def plot_verified(
    collective: str, points: list[Any], path: str, split_times: dict | None = None
) -> None:
    """``advise --verify``: measured mean time against size per forced algorithm (thin),
    Open MPI's default decision and our rules file (thick), and the gather split where it
    was timed (``split_times`` {(P, size): s}, violet), one panel per P."""
    from ..openmpi import algorithm_label

    plt = _pyplot()
    ranks = sorted({v.ranks for v in points})
    fig, axes = plt.subplots(len(ranks), 1, figsize=(7, 3.6 * len(ranks)), squeeze=False)
    for ax, p in zip(axes[:, 0], ranks):
        pts = sorted((v for v in points if v.ranks == p), key=lambda v: v.size)
        xs = [max(v.size, 1) for v in pts]
        for n in sorted({n for v in pts for n in v.forced_s}):
            got = [(x, v.forced_s[n] * 1e3) for x, v in zip(xs, pts) if n in v.forced_s]
            ax.plot(*zip(*got), marker=".", ms=3, lw=0.8, alpha=0.7,
                    label=f"{n} {algorithm_label(collective, n)}")  # fmt: skip
        ax.plot(xs, [v.default_s * 1e3 for v in pts], color="black", lw=2.2, label="default")
        ax.plot(xs, [v.ours_s * 1e3 for v in pts], color="red", lw=2.2, ls="--", label="ours")
        _plot_split(ax, sorted((m, t) for (q, m), t in (split_times or {}).items() if q == p))
        _finish(ax, "measured time [ms]", f"{collective}, P = {p}: measured (advise --verify)")
    _save(fig, path)
    plt.close(fig)


def _plot_split(ax: Any, points: list[tuple[int, float | None]]) -> None:
    """The gather split's (size, time s) points, dotted violet (none with a time: nothing)."""
    got = [(m, t * 1e3) for m, t in points if t]
    if got:
        ax.plot(*zip(*got), color="darkviolet", lw=2.2, ls=":", marker="o", ms=4,
                label="split (k sub-gathers, barrier between)")  # fmt: skip


def _finish(ax: Any, ylabel: str, title: str) -> None:
    """Log-log axes against message size, labels, title and legend."""
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("message size [B]")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
