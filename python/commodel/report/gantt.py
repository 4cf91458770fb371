"""``commodel predict --gantt FILE.png``: per-rank timelines (PlogPT Fig. 12 style).

Two views, chosen by size; the picture says which one it shows.

* **Bars** (at most ``ROWS_MAX`` ranks, ``LANES_MAX`` sends in flight per rank and
  ``BARS_MAX`` messages): one row per rank. Each send is a bar on its sender's row from the
  send's start to the receive's end, coloured by the highest network level its route
  crosses -- the level where it can meet its bottleneck: node links only (same switch or
  crossbar), a rack uplink / backbone, or a binary-tree height h. Sends that overlap in
  time get lanes of their own, so none hides another. A pale strip under each row shows
  the messages the rank is receiving (darker where several arrive at once). Messages
  delayed by a TCP retransmission timeout are hatched, each RTO is a red cross at the time
  it started, and a black tick marks when the rank finished. The legend names all of them.
* **Density** (larger runs): ranks are grouped into at most ``ROWS_MAX`` rows of k
  consecutive ranks and time into ``BINS`` columns; the shade of a cell is the mean number
  of sends in flight per rank of the row. A panel above stacks the messages in flight over
  all ranks by network level. RTO crosses and finish ticks (the row's last rank) as above.
  Its cost is linear in the number of messages (numpy, no object per message).

Times are shown in the unit that fits the makespan (s, ms, us). matplotlib is imported
only when drawing (Agg backend).
"""

from __future__ import annotations

import dataclasses
import heapq
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import MissingDependencyError
from ..units import duration_unit

if TYPE_CHECKING:
    from ..platform import Platform
    from ..prediction import Prediction

#: Most rows drawn: more ranks are grouped k to a row (density view).
ROWS_MAX = 64
#: Most sends in flight on one rank that the bar view gives lanes of their own.
LANES_MAX = 6
#: Most messages drawn as bars.
BARS_MAX = 20_000
#: Time columns of the density view.
BINS = 800

# Level 0 (same node) grey, then distinct hues; no red (the RTO crosses are red).
_PALETTE = (
    "#7f7f7f",
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#bcbd22",
    "#17becf",
    "#393b79",
    "#637939",
    "#8c6d31",
    "#843c39",
)


@dataclass(frozen=True)
class GanttView:
    """What a drawn chart shows: ``kind`` "bars" or "density", ``rows`` drawn,
    ``ranks_per_row``, the time ``unit``, the ``note`` written under the title and the
    ``legend`` entries."""

    kind: str
    rows: int
    ranks_per_row: int
    unit: str
    note: str
    legend: tuple[str, ...] = ()


def level_colour(level: int) -> str:
    """The colour of network level ``level`` (0: same node)."""
    return _PALETTE[level % len(_PALETTE)]


def route_levels(
    platform: Platform | None, src: np.ndarray, dst: np.ndarray
) -> tuple[np.ndarray, dict[int, str]]:
    """The highest network level between the nodes of each ``src[i]``, ``dst[i]`` pair,
    and the name of every level: 0 same node; a binary tree's height h = the bit length
    of node_a XOR node_b; 1 within a rack, 2 across the backbone; else 1 (node links)."""
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    if platform is None:
        return np.ones(len(src), dtype=np.int64), {1: "network"}
    nranks = int(max(src.max(initial=-1), dst.max(initial=-1))) + 1
    node = np.array([platform.node_of_rank(r) for r in range(nranks)], dtype=np.int64)
    a, b = node[src], node[dst]
    network = platform.network
    kind = getattr(network, "topology", None)
    racks = getattr(network, "racks", None)
    names: dict[int, str] = {}
    if kind == "binary-tree":
        levels = np.frexp((a ^ b).astype(np.float64))[1].astype(np.int64)  # bit length
        names.update({int(h): f"tree height {h}" for h in np.unique(levels) if h > 0})
    elif kind in ("racks", "leaf-spine", "fat-tree") and racks:
        rack = np.repeat(np.arange(len(racks)), racks)
        levels = np.where(rack[a] == rack[b], 1, 2)
        names.update({1: "within a rack", 2: "across the backbone"})
    else:
        levels = np.ones(len(src), dtype=np.int64)
        names[1] = "node links"
    levels = np.where(a == b, 0, levels)
    names[0] = "same node"
    present = set(np.unique(levels).tolist())
    return levels, {k: v for k, v in sorted(names.items()) if k in present}


def route_level(platform: Platform | None, src: int, dst: int) -> tuple[int, str]:
    """The highest network level between the nodes of ranks ``src`` and ``dst``."""
    levels, names = route_levels(platform, np.array([src]), np.array([dst]))
    return int(levels[0]), names[int(levels[0])]


def _lanes(rows: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """A lane per interval so that intervals of one row in one lane do not overlap
    (the lowest free lane, in order of start: as few lanes as the most overlapping)."""
    lane = np.zeros(len(rows), dtype=np.int64)
    free: dict[int, list[int]] = {}  # row -> free lanes (heap)
    busy: dict[int, list[tuple[float, int]]] = {}  # row -> (end, lane) (heap)
    for i in np.lexsort((end, start, rows)).tolist():
        r = int(rows[i])
        ends, spare = busy.setdefault(r, []), free.setdefault(r, [])
        while ends and ends[0][0] <= start[i]:
            heapq.heappush(spare, heapq.heappop(ends)[1])
        lane[i] = heapq.heappop(spare) if spare else len(ends)
        heapq.heappush(ends, (float(end[i]), int(lane[i])))
    return lane


def _occupancy(
    rows: np.ndarray, start: np.ndarray, end: np.ndarray, nrows: int, span: float, bins: int
) -> np.ndarray:
    """Time-weighted number of intervals in flight per (row, time bin) over [0, span]."""
    width = span / bins
    s, e = start / width, end / width  # in bins
    si = np.clip(np.floor(s).astype(np.int64), 0, bins - 1)
    ei = np.clip(np.floor(e).astype(np.int64), 0, bins - 1)
    size = nrows * bins
    same = si == ei
    # Partial first and last bins, and a difference array for the bins in between.
    part = np.bincount(rows * bins + si, np.where(same, e - s, si + 1 - s), minlength=size)
    part += np.bincount(rows * bins + ei, np.where(same, 0.0, e - ei), minlength=size)
    diff = np.bincount(rows * (bins + 1) + si + 1, ~same * 1.0, minlength=nrows * (bins + 1))
    diff -= np.bincount(rows * (bins + 1) + ei, ~same * 1.0, minlength=nrows * (bins + 1))
    full = np.cumsum(diff.reshape(nrows, bins + 1), axis=1)[:, :bins]
    return part.reshape(nrows, bins) + full


def _columns(prediction: Prediction) -> dict[str, np.ndarray]:
    from ..message_table import MessageTable

    table = prediction.messages
    names = ("src", "dst", "start_s", "end_s", "rto")
    if isinstance(table, MessageTable):
        return {name: table.column(name) for name in names}
    return {name: np.array([getattr(m, name) for m in table]) for name in names}


def draw_gantt(
    prediction: Prediction, path: str, platform: Platform | None = None, title: str = ""
) -> GanttView:
    """Draw the per-rank timeline of ``prediction`` (it must hold its messages) to ``path``;
    return which view it drew (module documentation)."""
    try:
        import matplotlib
    except ImportError as exc:
        raise MissingDependencyError("matplotlib", "plot", "predict --gantt") from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    nranks = len(prediction.ranks)
    m = _columns(prediction)
    if len(m["src"]):
        m["level"], names = route_levels(platform, m["src"], m["dst"])
    else:
        m["level"], names = np.zeros(0, dtype=np.int64), {}
    unit, scale = duration_unit(prediction.makespan_s)
    span = max(prediction.makespan_s, 1e-30) / scale
    m["t0"], m["t1"] = m["start_s"] / scale, m["end_s"] / scale
    heading = title or f"{prediction.model} on {prediction.platform}"
    lanes = _lanes(m["src"], m["t0"], m["t1"]) if len(m["src"]) <= BARS_MAX else None
    bars = nranks <= ROWS_MAX and lanes is not None and (lanes.max(initial=0) < LANES_MAX)
    if bars:
        fig = _bars(plt, prediction, m, lanes, names, unit, span)
        view = GanttView("bars", nranks, 1, unit, f"{nranks} ranks, one row each")
    else:
        fig, view = _density(plt, prediction, m, names, unit, span)
    fig.axes[0].set_title(f"{heading}\n{view.note}", fontsize=10)
    legend = tuple(t.get_text() for a in fig.axes if a.get_legend() for t in a.get_legend().texts)
    view = dataclasses.replace(view, legend=legend)
    fig.tight_layout()
    metadata = {"Software": None} if path.endswith(".png") else None
    fig.savefig(path, dpi=100, metadata=metadata, bbox_inches="tight")
    plt.close(fig)
    return view


def _markers(ax: Any, prediction: Prediction, per_row: int, scale: float, size: float) -> list:
    """RTO crosses on the sender's row and a tick where each row's last rank finished;
    their legend handles."""
    from matplotlib.lines import Line2D

    size = min(size, 600.0)  # points squared: a tick as high as a row, up to 24 pt
    nranks = len(prediction.ranks)
    rows = np.arange(nranks) // per_row
    finish = np.zeros(int(rows[-1]) + 1 if nranks else 0)
    np.maximum.at(finish, rows, [r.finish_s / scale for r in prediction.ranks])
    ax.scatter(finish, np.arange(len(finish)), marker="|", color="black", s=size, zorder=4)
    label = "rank finishes" if per_row == 1 else "last rank of the row finishes"
    handles = [Line2D([], [], marker="|", color="black", ls="", markersize=10, label=label)]
    if prediction.rto_events:
        at = np.array([e["at_s"] for e in prediction.rto_events]) / scale
        src = np.array([e["src"] for e in prediction.rto_events]) // per_row
        ax.scatter(at, src, marker="x", color="red", s=30, linewidths=1.2, zorder=5)
        handles.append(
            Line2D([], [], marker="x", color="red", linestyle="", label="RTO starts (sender's row)")
        )
    return handles


def _legend(key: Any, names: dict[int, str], extra: list) -> None:
    """The legend, alone in the axes ``key`` beside the plot (it covers no rank)."""
    from matplotlib.patches import Patch

    handles = [Patch(facecolor=level_colour(k), label=v) for k, v in names.items()]
    key.axis("off")
    key.legend(handles=handles + extra, loc="upper left", fontsize=8, frameon=False)


def _rectangles(t0: np.ndarray, t1: np.ndarray, y0: np.ndarray, h: float) -> np.ndarray:
    """Vertices (n, 4, 2) of the rectangles [t0, t1] x [y0, y0 + h]."""
    y1 = y0 + h
    return np.stack([np.stack(c, 1) for c in ((t0, y0), (t1, y0), (t1, y1), (t0, y1))], 1)


def _bars(
    plt: Any,
    prediction: Prediction,
    m: dict[str, np.ndarray],
    lanes: np.ndarray,
    names: dict[int, str],
    unit: str,
    span: float,
) -> Any:
    from matplotlib.collections import PolyCollection
    from matplotlib.patches import Patch

    nranks = len(prediction.ranks)
    nlanes = int(lanes.max(initial=0)) + 1
    height = min(11.0, max(2.5, 1.2 + (0.22 + 0.1 * nlanes) * nranks))
    fig, (ax, key) = plt.subplots(
        1, 2, figsize=(12, height), gridspec_kw={"width_ratios": [5, 1.3]}
    )
    # Row r spans [r - 0.45, r + 0.45]: sends in lanes on top, receives in a strip below.
    lane_h = 0.62 / nlanes
    colours = [level_colour(int(k)) for k in m["level"]]
    recv = _rectangles(m["t0"], m["t1"], m["dst"] + 0.22, 0.2)
    ax.add_collection(PolyCollection(recv, facecolors=colours, alpha=0.3, linewidths=0))
    y0 = m["src"] - 0.45 + (lanes + 0.06) * lane_h
    send = _rectangles(m["t0"], m["t1"], y0, 0.88 * lane_h)
    rto = m["rto"].astype(bool)
    for subset, hatch in ((~rto, None), (rto, "////")):
        if subset.any():
            faces = [c for c, chosen in zip(colours, subset) if chosen]
            ax.add_collection(
                PolyCollection(
                    send[subset], facecolors=faces, edgecolors="black", linewidths=0.3, hatch=hatch
                )
            )
    extra = []
    if rto.any():
        extra.append(
            Patch(facecolor="white", edgecolor="black", hatch="////", label="delayed by an RTO")
        )
    if len(rto):
        extra.append(Patch(facecolor="grey", alpha=0.3, label="receiving (strip under the row)"))
    scale = prediction.makespan_s / span if span else 1.0
    row_points = 72 * (height - 1.2) / max(nranks, 1)
    extra += _markers(ax, prediction, 1, scale, (0.9 * row_points) ** 2)
    _legend(key, names, extra)
    step = max(1, math.ceil(nranks / 32))
    ax.set_yticks(range(0, nranks, step))
    ax.set_yticklabels([f"rank {r}" for r in range(0, nranks, step)], fontsize=8)
    ax.set_ylim(nranks - 0.5, -0.5)
    ax.set_xlim(0, span * 1.02)
    ax.set_xlabel(f"time ({unit})")
    return fig


def _density(
    plt: Any,
    prediction: Prediction,
    m: dict[str, np.ndarray],
    names: dict[int, str],
    unit: str,
    span: float,
) -> tuple[Any, GanttView]:
    nranks = len(prediction.ranks)
    per_row = max(1, math.ceil(nranks / ROWS_MAX))
    nrows = math.ceil(nranks / per_row)
    fig = plt.figure(figsize=(12, 8))
    grid = fig.add_gridspec(2, 3, width_ratios=[5, 0.12, 1.3], height_ratios=[1, 3])
    top = fig.add_subplot(grid[0, 0])
    ax = fig.add_subplot(grid[1, 0], sharex=top)
    # Messages in flight over all ranks, stacked by level.
    levels = list(names)
    per_level = _occupancy(
        np.searchsorted(levels, m["level"]), m["t0"], m["t1"], max(1, len(levels)), span, BINS
    )
    centres = (np.arange(BINS) + 0.5) * span / BINS
    top.stackplot(centres, per_level, colors=[level_colour(k) for k in levels])
    top.set_ylabel("messages in flight\n(all ranks)", fontsize=8)
    top.tick_params(labelbottom=False)
    # Sends in flight per rank, mean over each row's ranks.
    rows = (m["src"] // per_row).astype(np.int64)
    ranks_in_row = np.bincount(np.arange(nranks) // per_row, minlength=nrows)
    shade = _occupancy(rows, m["t0"], m["t1"], nrows, span, BINS) / ranks_in_row[:, None]
    image = ax.imshow(
        shade,
        aspect="auto",
        interpolation="nearest",
        cmap="YlGnBu",
        extent=(0, span, nrows - 0.5, -0.5),
        vmin=0,
    )
    scale = prediction.makespan_s / span if span else 1.0
    row_points = 72 * 5.5 / nrows  # the heat map is about 5.5 inches high
    extra = _markers(ax, prediction, per_row, scale, (0.9 * row_points) ** 2)
    _legend(fig.add_subplot(grid[:, 2]), names, extra)
    bar = fig.colorbar(image, cax=fig.add_subplot(grid[1, 1]))
    bar.set_label("sends in flight per rank (mean over the row)", fontsize=8)
    step = max(1, math.ceil(nrows / 16))
    ticks = list(range(0, nrows, step))
    ax.set_yticks(ticks)
    if per_row == 1:
        ax.set_yticklabels([f"rank {t}" for t in ticks], fontsize=8)
        note = f"{nranks} ranks; more sends at once than lanes for bars: density view"
    else:
        labels = [f"ranks {t * per_row}-{min(nranks, (t + 1) * per_row) - 1}" for t in ticks]
        ax.set_yticklabels(labels, fontsize=8)
        note = f"{nranks} ranks in {nrows} rows of {per_row}: density view"
    ax.set_xlim(0, span * 1.02)
    ax.set_xlabel(f"time ({unit})")
    return fig, GanttView("density", nrows, per_row, unit, note)
