"""TCP incast as a stochastic rule with any model: ``commodel predict --samples N --seed S``.

The engine's rule (``crates/commodel-engine/src/contention/incast.rs``): when k >= 2
messages flow into one node at once, the operation involves n = k + 1 processors and
escalates to level t_i with probability f_i(n, M) (Lastovetsky 4.3.2). This module builds
the rule's table from the platform's ``many_to_one`` statistics for the process counts and
message sizes the schedule can produce, runs the schedule ``samples`` times with seeds
``seed, seed + 1, ...`` and summarises the makespans (mean, median, p95, histogram).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any

from ..errors import CommodelError, PlatformError
from ..units import duration_unit, format_duration, seconds_to_ps
from .closed_forms import LMOModel

# f_i(n, M) evaluated for the incast rule's table, one (n, M, level) each: about 10 s here.
MAX_TABLE = 2**20


def _send_sizes(schedule: Any) -> list[int]:
    sizes = set()
    for rank in range(schedule.num_ranks):
        for op in schedule.rank_ops(rank):
            if op[0] == "send":
                sizes.add(int(op[3]))
    return sorted(sizes)


def incast_table(platform: Any, schedule: Any) -> dict[str, Any]:
    """The engine's ``incast`` object (without ``seed``) for ``schedule`` on ``platform``."""
    m2o = platform.sections.get("many_to_one")
    if not m2o or not m2o.get("levels"):
        raise PlatformError(
            f"platform {platform.name} ({platform.source}) has no `many_to_one` section with "
            "escalation levels; --samples needs it (commodel fit writes it)"
        )
    model = LMOModel([], [], [], m2o)
    table = []
    sizes = _send_sizes(schedule)
    entries = max(0, schedule.num_ranks - 2) * len(sizes) * len(m2o["levels"])
    if entries > MAX_TABLE:
        raise CommodelError(
            f"the incast rule's table for {schedule.num_ranks} ranks and {len(sizes)} message "
            f"sizes would need {entries} escalation probabilities, more than {MAX_TABLE}"
        )
    for n in range(3, schedule.num_ranks + 1):
        for size in sizes:
            f = [e.probability for e in model.escalations(n, size)]
            if any(p > 0 for p in f):
                total = sum(f)
                if total > 1.0:  # rounding of the renormalised certain levels
                    f = [p / total for p in f]
                table.append([n, size, f])
    return {"levels": [seconds_to_ps(float(t)) for t in m2o["levels"]], "table": table}


@dataclass(frozen=True)
class Samples:
    """Makespans of repeated stochastic runs."""

    model: str
    makespans_s: list[float]
    escalated_runs: int

    @property
    def mean_s(self) -> float:
        return statistics.fmean(self.makespans_s)

    @property
    def median_s(self) -> float:
        return statistics.median(self.makespans_s)

    @property
    def p95_s(self) -> float:
        ordered = sorted(self.makespans_s)
        return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]

    def histogram(self, bins: int = 10) -> list[tuple[float, float, int]]:
        """(low, high, count) over equal-width bins between the extremes."""
        lo, hi = min(self.makespans_s), max(self.makespans_s)
        if hi <= lo:
            return [(lo, hi, len(self.makespans_s))]
        width = (hi - lo) / bins
        counts = [0] * bins
        for t in self.makespans_s:
            counts[min(bins - 1, int((t - lo) / width))] += 1
        return [(lo + i * width, lo + (i + 1) * width, c) for i, c in enumerate(counts)]

    def report(self) -> str:
        unit, _ = duration_unit(max(self.makespans_s))
        lines = [
            f"model     {self.model}",
            f"samples   {len(self.makespans_s)} ({self.escalated_runs} with an escalation)",
            f"mean      {format_duration(self.mean_s, unit)}",
            f"median    {format_duration(self.median_s, unit)}",
            f"p95       {format_duration(self.p95_s, unit)}",
            "",
            "makespan histogram:",
        ]
        hist = self.histogram()
        widest = max(c for _, _, c in hist)
        for low, high, count in hist:
            bar = "#" * (0 if widest == 0 else round(40 * count / widest))
            lines.append(
                f"  {format_duration(low, unit):>12} .. {format_duration(high, unit):>12}  "
                f"{count:>5}  {bar}"
            )
        return "\n".join(lines) + "\n"


def predict_samples(
    schedule: Any, platform: Any, model: str, samples: int, seed: int = 0
) -> Samples:
    """Run ``schedule`` ``samples`` times under ``model`` with the incast rule (each run a
    :func:`commodel.prediction.predict` with seed ``seed + i``)."""
    from ..platform import incast_model
    from ..prediction import predict
    from ..schedule_cost import check_samples_cost

    if samples < 1:
        raise CommodelError(f"--samples must be >= 1, got {samples}")
    check_samples_cost(samples, schedule.num_ops + schedule.num_ranks)
    name = incast_model(model)
    incast = incast_table(platform, schedule)
    makespans, escalated = [], 0
    for i in range(samples):
        run = predict(
            schedule, platform, name, record_messages=False, incast={**incast, "seed": seed + i}
        )
        makespans.append(run.makespan_s)
        escalated += 1 if run.rto_events else 0
    return Samples(name, makespans, escalated)
