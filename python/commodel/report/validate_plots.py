"""Plots of ``commodel validate`` (matplotlib, Agg backend; imported only when drawing).

* :func:`error_histograms`: the distribution of relative errors per model (Zhu et al. Fig. 2);
* :func:`predicted_vs_measured`: makespan against message size per schedule family, measured
  and predicted by every model (Nomura et al., PlogPT Fig. 17);
* :func:`series_plot`, :func:`scatter_plot`: plain plots for ``study/scripts/experiment.py``.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import MissingDependencyError

MARKERS = "os^vD<>ph*x+"


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError as exc:
        raise MissingDependencyError("matplotlib", "plot", "commodel validate") from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def error_histograms(
    errors: dict[str, list[float]], path: str, scope: str, tolerance: float = 0.10
) -> None:
    """One histogram of relative errors (percent, 5% bins, clipped at +-100%) per model."""
    from ..stats import histogram

    plt = _pyplot()
    models = [m for m, e in errors.items() if e]
    n = max(1, len(models))
    cols = min(4, n)
    rows = int(math.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.6 * rows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.axis("off")
    if not models:
        axes[0][0].text(0.5, 0.5, "no predictions", ha="center", va="center")
    for ax, model in zip(axes.flat, models):
        rows_h = histogram(errors[model], width=0.05, limit=1.0)
        mids = [100 * (lo + hi) / 2 for lo, hi, _ in rows_h[1:-1]]
        counts = [c for _, _, c in rows_h[1:-1]]
        total = len(errors[model])
        ax.bar(mids, [c / total for c in counts], width=5, color="tab:blue", edgecolor="white")
        # the open bins beyond +-100% drawn at the edges
        for lo, _hi, c in (rows_h[0], rows_h[-1]):
            if c:
                x = -105 if math.isinf(lo) else 105
                ax.bar([x], [c / total], width=5, color="tab:red")
        inside = sum(1 for e in errors[model] if abs(e) <= tolerance * (1 + 1e-12))
        ax.axvspan(-100 * tolerance, 100 * tolerance, color="tab:green", alpha=0.12)
        ax.set_title(
            f"{model}: {100 * inside / total:.0f}% within +-{100 * tolerance:.0f}%", fontsize=9
        )
        ax.set_xlim(-110, 110)
        ax.set_xlabel("relative error (predicted - measured) / measured [%]", fontsize=7)
        ax.set_ylabel(f"fraction of {scope}", fontsize=7)
        ax.tick_params(labelsize=7)
    fig.suptitle(f"prediction error of {scope} (red: beyond +-100%)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def predicted_vs_measured(v: Any, path: str) -> bool:
    """Makespan against size per family, measured (black) and per model; False if no sizes."""
    families: dict[str, list[Any]] = {}
    for r in v.results:
        if r.size is not None:
            families.setdefault(r.family, []).append(r)
    families = {k: sorted(rs, key=lambda r: r.size) for k, rs in families.items() if len(rs) > 1}
    if not families:
        return False
    plt = _pyplot()
    n = len(families)
    fig, axes = plt.subplots(1, n, figsize=(5 * n, 4), squeeze=False)
    for ax, (family, rs) in zip(axes[0], sorted(families.items())):
        sizes = [r.size for r in rs]
        ax.plot(
            sizes,
            [r.measured.makespan_s for r in rs],
            "k-o",
            lw=2,
            label="measured (median)",
        )
        ax.fill_between(
            sizes,
            [min(r.measured.makespans) for r in rs],
            [max(r.measured.makespans) for r in rs],
            color="0.8",
            label="measured min-max",
        )
        for i, model in enumerate(v.models):
            pts = [
                (r.size, r.outcomes[model].makespan_s)
                for r in rs
                if r.outcomes[model].error is None
            ]
            if pts:
                ax.plot(
                    [p[0] for p in pts],
                    [p[1] for p in pts],
                    marker=MARKERS[i % len(MARKERS)],
                    ls="--",
                    ms=4,
                    label=model,
                )
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("message size [B]")
        ax.set_ylabel("makespan [s]")
        ax.set_title(family, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def series_plot(
    series: dict[str, list[tuple[float, float]]],
    path: str,
    title: str,
    xlabel: str,
    ylabel: str,
    logx: bool = True,
    logy: bool = True,
) -> None:
    """A simple line plot of named ``(x, y)`` series (used by study/scripts/experiment.py)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for i, (name, pts) in enumerate(series.items()):
        pts = sorted(pts)
        style = "k-" if name.startswith("measured") else "--"
        ax.plot(
            [p[0] for p in pts],
            [p[1] for p in pts],
            style,
            marker=MARKERS[i % len(MARKERS)],
            ms=4,
            label=name,
        )
    if logx:
        ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    _finish(plt, fig, ax, path, title, xlabel, ylabel)


def _finish(plt, fig, ax, path: str, title: str, xlabel: str, ylabel: str) -> None:
    """Title, axis labels, grid and legend; save the figure to ``path`` and close it."""
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def scatter_plot(
    points: dict[str, list[tuple[float, float]]], path: str, title: str, xlabel: str, ylabel: str
) -> None:
    """Scatter of named point sets (e.g. many-to-one times per repetition against n)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for i, (name, pts) in enumerate(points.items()):
        ax.scatter(
            [p[0] for p in pts], [p[1] for p in pts], s=9, marker=MARKERS[i % 12], label=name
        )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    _finish(plt, fig, ax, path, title, xlabel, ylabel)
