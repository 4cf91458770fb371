"""Plots of measurements and fits (matplotlib, Agg backend; imported only when drawing).

* :func:`plot_plogp`: o_s(m), o_r(m) and g(m) against m on log-log axes (Kielmann Fig. 2),
  with the saturation g(m) and the bidirectional g(m) when measured.
* :func:`plot_tree`: b(h) / 2^(h-1) and d(h) per tree height (PlogPT Table II).
* :func:`plot_many_to_one`: every many-to-one time against M, one colour per escalation
  level, with M1, Mc, M2 marked (Lastovetsky Fig. 2-3).
"""

from __future__ import annotations

from typing import Any

from ..errors import MissingDependencyError


def _pyplot():
    try:
        import matplotlib
    except ImportError as exc:
        raise MissingDependencyError("matplotlib", "plot", "commodel plot") from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: str) -> None:
    fig.tight_layout()
    # no timestamps in the metadata, so the same data gives the same file
    metadata = {"Software": None} if path.endswith(".png") else {"CreationDate": None}
    if path.endswith(".svg"):
        metadata = {"Date": None}
    fig.savefig(path, dpi=120, metadata=metadata)


def plot_plogp(fit: Any, path: str, title: str = "") -> None:
    """Kielmann Fig. 2: send overhead, receive overhead and gap against message size."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    m = [max(s, 0.5) for s in fit.sizes]  # size 0 drawn at 0.5 B on the log axis
    us = 1e6
    ax.plot(m, [v * us for v in fit.g_fast], "o-", label="g(m), fast (roundtrips)")
    if fit.g_saturation is not None:
        ax.plot(m, [v * us for v in fit.g_saturation], "s--", label="g(m), saturation")
    if fit.g_bidirectional is not None:
        ax.plot(m, [v * us for v in fit.g_bidirectional], "^-.", label="g(m), bidirectional")
    ax.plot(m, [v * us for v in fit.o_s], "x-", label="o_s(m)")
    ax.plot(m, [v * us for v in fit.o_r], "+-", label="o_r(m)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("message size m [bytes] (0 B drawn at 0.5 B)")
    ax.set_ylabel("time [µs]")
    ax.set_title(title or f"PLogP, L = {fit.L * us:.2f} µs")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    _save(fig, path)
    plt.close(fig)


def plot_tree(tree: Any, path: str, title: str = "") -> None:
    """b(h)/2^(h-1) and d(h) per height, uni- and bidirectional."""
    plt = _pyplot()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 4))
    for label, levels in (("unidirectional", tree.uni), ("bidirectional", tree.bi)):
        if levels is None:
            continue
        hs = list(range(1, len(levels["b"]) + 1))
        ax1.plot(
            hs, [b / 2 ** (h - 1) * 8 / 1e6 for h, b in zip(hs, levels["b"])], "o-", label=label
        )
        ax2.plot(hs, [d * 1e6 for d in levels["d"]], "o-", label=label)
    ax1.set_xlabel("height h")
    ax1.set_ylabel("b(h) / 2^(h-1) [Mbit/s]")
    ax2.set_xlabel("height h")
    ax2.set_ylabel("d(h) [µs]")
    for ax in (ax1, ax2):
        ax.grid(True, alpha=0.3)
        ax.legend()
    fig.suptitle(title or "binary tree: bandwidth and buffer delay per height")
    _save(fig, path)
    plt.close(fig)


def plot_many_to_one(
    points: list[tuple[int, int, float, int]], model: dict[str, Any], path: str
) -> None:
    """points: (n, M, time_s, level) with level 0 = not escalated; model: the fitted section."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    levels = sorted({p[3] for p in points})
    for lv in levels:
        xs = [p[1] for p in points if p[3] == lv]
        ys = [p[2] * 1e3 for p in points if p[3] == lv]
        label = "not escalated" if lv == 0 else f"level {lv}"
        ax.plot(xs, ys, "." if lv == 0 else "o", label=label, alpha=0.6)
    for key, style in (("M2", "k--"),):
        if model.get(key):
            ax.axvline(model[key], color=style[0], linestyle="--", label=key)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("message size M [bytes]")
    ax.set_ylabel("many-to-one time [ms]")
    ax.set_title("many-to-one: escalations (Lastovetsky Fig. 2)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    _save(fig, path)
    plt.close(fig)
