"""``commodel predict --gantt FILE.png``: per-rank timelines (PlogPT Fig. 12 style).

Each message is a bar on its sender's row from the send's start to the receive's end,
coloured by the highest network level its route crosses — the level where it can meet
its bottleneck: node links only (same switch or crossbar), a rack uplink / backbone, or
a binary-tree height h — with a lighter bar on the receiver's row. Messages delayed by a
TCP retransmission timeout are hatched and each RTO is marked with a red cross at the
time it started. matplotlib is imported only when drawing (Agg backend).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import MissingDependencyError

if TYPE_CHECKING:
    from ..platform import Platform
    from ..prediction import Prediction


def route_level(platform: Platform | None, src: int, dst: int) -> tuple[int, str]:
    """The highest network level between the nodes of ranks ``src`` and ``dst``."""
    if platform is None:
        return 1, "network"
    a, b = platform.node_of_rank(src), platform.node_of_rank(dst)
    if a == b:
        return 0, "same node"
    network = platform.network
    kind = getattr(network, "topology", None)
    if kind == "binary-tree":
        h = (a ^ b).bit_length()
        return h, f"tree height {h}"
    racks = getattr(network, "racks", None)
    if kind in ("racks", "leaf-spine", "fat-tree") and racks:
        bounds, start = [], 0
        for n in racks:
            bounds.append((start, start + n))
            start += n
        ra = next(i for i, (lo, hi) in enumerate(bounds) if lo <= a < hi)
        rb = next(i for i, (lo, hi) in enumerate(bounds) if lo <= b < hi)
        return (1, "within a rack") if ra == rb else (2, "across the backbone")
    return 1, "node links"


def draw_gantt(
    prediction: Prediction, path: str, platform: Platform | None = None, title: str = ""
) -> None:
    """Draw the per-rank timeline of ``prediction`` (it must hold its messages) to ``path``."""
    try:
        import matplotlib
    except ImportError as exc:
        raise MissingDependencyError("matplotlib", "plot", "predict --gantt") from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    nranks = len(prediction.ranks)
    fig, ax = plt.subplots(figsize=(9, max(2.5, 0.35 * nranks + 1.5)))
    cmap = plt.get_cmap("viridis")
    levels: dict[int, str] = {}
    for m in prediction.messages:
        level, label = route_level(platform, m.src, m.dst)
        levels[level] = label
    top = max(levels) if levels else 1
    handles: dict[str, Any] = {}
    for m in prediction.messages:
        level, label = route_level(platform, m.src, m.dst)
        colour = cmap(0.15 + 0.7 * level / max(1, top))
        width = m.end_s - m.start_s
        bar = ax.barh(
            m.src,
            width,
            left=m.start_s,
            height=0.6,
            color=colour,
            edgecolor="black",
            linewidth=0.4,
            hatch="//" if m.rto else None,
        )
        ax.barh(m.dst, width, left=m.start_s, height=0.25, color=colour, alpha=0.35)
        handles.setdefault(label, bar)
    for e in prediction.rto_events:
        ax.plot(e["at_s"], e["src"], marker="x", color="red", markersize=8)
    for r in prediction.ranks:
        ax.plot(r.finish_s, r.rank, marker="|", color="black", markersize=12)
    ax.set_yticks(range(nranks))
    ax.set_yticklabels([f"rank {r}" for r in range(nranks)])
    ax.invert_yaxis()
    ax.set_xlabel("time (s)")
    ax.set_title(title or f"{prediction.model} on {prediction.platform}")
    if handles:
        ax.legend(handles.values(), handles.keys(), loc="lower right", fontsize=8)
    fig.tight_layout()
    metadata = {"Software": None} if path.endswith(".png") else None
    fig.savefig(path, dpi=120, metadata=metadata)
    plt.close(fig)
