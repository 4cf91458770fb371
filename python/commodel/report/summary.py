"""The readable summary of a prediction (``commodel predict`` without ``--json``)."""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

from ..units import duration_unit, format_duration, format_size
from .tables import format_table

if TYPE_CHECKING:
    from ..prediction import Prediction

# Up to this many ranks every rank's finish time is listed; above, the slowest ones.
ALL_RANKS_UP_TO = 32
SLOWEST_SHOWN = 10


def prediction_summary(
    prediction: Prediction,
    schedule_name: str = "",
    num_ops: int | None = None,
    bytes_sent: int | None = None,
    cpu_stretch: tuple[int, float] | None = None,
) -> str:
    """Makespan, slowest rank and per-rank finish times, in a unit that fits the makespan;
    ``cpu_stretch`` (C, s): the ranks shared C cores and their CPU work took s times as long
    (the platform's ``cpu`` section), said on a line of its own."""
    unit, _ = duration_unit(prediction.makespan_s)
    slowest = prediction.slowest_rank
    nranks = len(prediction.ranks)
    lines = []
    if schedule_name:
        details = [f"{nranks} ranks"]
        if num_ops is not None:
            details.append(f"{num_ops} operations")
        if bytes_sent is not None:
            details.append(f"{format_size(bytes_sent)} sent")
        lines.append(f"schedule  {schedule_name} ({', '.join(details)})")
    if prediction.platform:
        lines.append(f"platform  {prediction.platform}")
    lines.append(f"model     {prediction.model}")
    if cpu_stretch is not None:
        cores, s = cpu_stretch
        lines.append(f"cpu       {nranks} ranks share {cores} cores: CPU work x{s:.3g}")
    made = ""
    if prediction.noise is not None:  # the median of noisy runs (prediction.py, Stragglers)
        nz = prediction.noise
        made = (
            f" (the median of {nz['runs']} runs with per-message noise sigma {nz['sigma']:.3g}"
            f": stragglers; {format_duration(nz['noise_free_makespan_s'], unit)} without)"
        )
    lines.append(f"makespan  {format_duration(prediction.makespan_s, unit)}{made}")
    if prediction.interval is not None:
        iv = prediction.interval
        lines.append(
            f"interval  {format_duration(iv['low_s'], unit)} .. "
            f"{format_duration(iv['high_s'], unit)} (80%: {iv['samples']} runs with "
            f"per-message noise sigma {iv['sigma']:.3g}"
            + (f", model error sigma_m {iv['model_error']:.3g})" if iv.get("model_error") else ")")
        )
    lines.append(f"slowest   rank {slowest.rank}")
    if prediction.rto_events:
        lines.append(f"RTOs      {len(prediction.rto_events)}")
    lines.append(f"events    {prediction.events}")
    lines.append("")
    if nranks <= ALL_RANKS_UP_TO:
        shown = prediction.ranks
        lines.append("finish time of every rank:")
    else:
        # sorted(...)[:SLOWEST_SHOWN] (the keys are unique) without holding a key per rank:
        # at 2^20 ranks the sort took 113 MiB on top of the ranks' 185 MiB.
        shown = heapq.nsmallest(
            SLOWEST_SHOWN, prediction.ranks, key=lambda r: (-r.finish_s, r.rank)
        )
        lines.append(f"the {SLOWEST_SHOWN} slowest of {nranks} ranks:")
    rows = [(r.rank, format_duration(r.finish_s, unit)) for r in shown]
    lines.append(format_table(["rank", "finish"], rows, align="rr", indent="  "))
    return "\n".join(lines) + "\n"
