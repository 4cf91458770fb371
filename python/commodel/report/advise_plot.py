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
        # shade each size's region (geometric midpoints between sizes) in the best's colour
        for i, pt in enumerate(pts):
            best = pt.best
            if best is None:
                continue
            lo = (sizes[i - 1] * sizes[i]) ** 0.5 if i else sizes[i] / 1.41
            hi = (sizes[i] * sizes[i + 1]) ** 0.5 if i + 1 < len(sizes) else sizes[i] * 1.41
            ax.axvspan(lo, hi, color=colour[best.number], alpha=0.12, lw=0)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("message size [B]")
        ax.set_ylabel("predicted time [ms]")
        ax.set_title(f"{adv.collective}, P = {p}, {adv.platform}, model {adv.model}", fontsize=9)
        ax.legend(fontsize=7)
    _save(fig, path)
    plt.close(fig)


def _algorithms(adv: Any) -> list[tuple[int, str, Any]]:
    from ..advise.rules import ALGORITHMS

    return ALGORITHMS[adv.collective]


def _time(pt: Any, number: int) -> float | None:
    for c in pt.candidates:
        if c.number == number:
            return c.time_s
    return None
