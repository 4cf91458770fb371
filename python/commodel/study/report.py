"""The held-out study's report: the targets of issue 38, per cluster and overall.

Targets (on clusters never used for tuning):

* ``calibrate`` succeeds on every spec, in under :data:`CALIBRATE_BUDGET_S`;
* Alltoall A and B, 16 KiB-1 MiB: at least 90% of the points within +-10% of the measured
  median, none beyond +-20%;
* random patterns at 256 KiB, d = 1..3: at least 85% of makespans within +-10%;
* forced Open MPI algorithms: at least 80% within +-15%, and the predicted order right
  wherever two measured medians (same collective and size) differ by more than 10%;
* intervals: the 80% interval covers 70-90% of the measured medians;
* timeouts: precision and recall of at least 0.8. A schedule *has timeouts* when its
  hosts counted at least one TCP retransmission timeout per two repetitions (the median run
  likely had one); a model predicts them when its prediction has an RTO event.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

CALIBRATE_BUDGET_S = 180.0


@dataclass
class Tally:
    """Counts toward one target."""

    hit: int = 0
    total: int = 0
    worst: float = 0.0  # largest |relative error|
    misses: list[str] = field(default_factory=list)

    def add(self, ok: bool, err: float = 0.0, what: str = "") -> None:
        self.total += 1
        self.hit += ok
        self.worst = max(self.worst, abs(err))
        if not ok and what:
            self.misses.append(what)

    def merge(self, other: Tally) -> None:
        self.hit += other.hit
        self.total += other.total
        self.worst = max(self.worst, other.worst)
        self.misses += other.misses

    @property
    def share(self) -> float:
        return self.hit / self.total if self.total else math.nan

    def text(self) -> str:
        if not self.total:
            return "-"
        return f"{self.hit}/{self.total} ({100 * self.share:.0f}%)"


@dataclass
class Scores:
    """The targets' tallies of one cluster (or of several, merged)."""

    alltoall: Tally = field(default_factory=Tally)
    alltoall_20: Tally = field(default_factory=Tally)
    random: Tally = field(default_factory=Tally)
    forced: Tally = field(default_factory=Tally)
    order: Tally = field(default_factory=Tally)
    coverage: Tally = field(default_factory=Tally)
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def merge(self, other: Scores) -> None:
        for name in ("alltoall", "alltoall_20", "random", "forced", "order", "coverage"):
            getattr(self, name).merge(getattr(other, name))
        self.tp += other.tp
        self.fp += other.fp
        self.fn += other.fn

    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else math.nan

    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else math.nan


def _err(pred: dict[str, Any], measured: float) -> float | None:
    t = pred.get("makespan_s")
    if t is None or not measured:
        return None
    return (t - measured) / measured


def score(result: dict[str, Any], model: str, excluded: set[str] | None = None) -> Scores:
    """The tallies of one cluster's ``score.json`` under ``model``; schedules whose file is in
    ``excluded`` (machine-bound runs) are left out."""
    s = Scores()
    excluded = excluded or set()
    for row in result["schedules"]:
        if row["file"] in excluded:
            continue
        pred = row["models"].get(model, {})
        err = _err(pred, row["measured_s"])
        what = f"{row['file']} {err:+.0%}" if err is not None else f"{row['file']} (none)"
        ok10 = err is not None and abs(err) <= 0.10
        if row["part"] == "alltoall":
            s.alltoall.add(ok10, err or 0.0, what)
            s.alltoall_20.add(err is not None and abs(err) <= 0.20, err or 0.0, what)
        else:
            s.random.add(ok10, err or 0.0, what)
        lo, hi = pred.get("low_s"), pred.get("high_s")
        if lo is not None and hi is not None:
            s.coverage.add(lo <= row["measured_s"] <= hi, 0.0, row["file"])
        measured_to = row["timeouts"] >= max(1.0, row["reps"] / 2)
        predicted_to = (pred.get("rto") or 0) > 0
        s.tp += measured_to and predicted_to
        s.fp += predicted_to and not measured_to
        s.fn += measured_to and not predicted_to
    groups: dict[tuple[str, int], list[tuple[float, float, int]]] = {}
    for row in result["forced"]:
        pred = row["models"].get(model, {})
        err = _err(pred, row["measured_s"])
        what = f"{row['collective']} {row['algorithm']} {row['size']} B"
        s.forced.add(err is not None and abs(err) <= 0.15, err or 0.0, f"{what} {err or 0:+.0%}")
        if pred.get("low_s") is not None and pred.get("high_s") is not None:
            s.coverage.add(pred["low_s"] <= row["measured_s"] <= pred["high_s"], 0.0, what)
        if err is not None:
            key = (row["collective"], row["size"])
            groups.setdefault(key, []).append(
                (row["measured_s"], pred["makespan_s"], row["algorithm"])
            )
    for (coll, size), rows in groups.items():
        for i, (m1, p1, a1) in enumerate(rows):
            for m2, p2, a2 in rows[i + 1 :]:
                if max(m1, m2) > 1.10 * min(m1, m2):
                    ok = (m1 < m2) == (p1 < p2)
                    s.order.add(ok, 0.0, f"{coll} {size} B: {a1} vs {a2}")
    return s


def target_lines(s: Scores, calibrations: list[tuple[str, float | None]]) -> list[str]:
    """The targets, met or not, as markdown bullet lines."""

    def mark(ok: bool) -> str:
        return "met" if ok else "**not met**"

    slow = [(n, t) for n, t in calibrations if t is None or t > CALIBRATE_BUDGET_S]
    lines = [
        f"- calibrate under {CALIBRATE_BUDGET_S:.0f} s on every spec: "
        + mark(not slow)
        + (
            " ("
            + ", ".join(f"{n}: {'failed' if t is None else f'{t:.0f} s'}" for n, t in slow)
            + ")"
            if slow
            else ""
        ),
        f"- Alltoall A/B within +-10%: {s.alltoall.text()} (target 90%): "
        + mark(s.alltoall.share >= 0.9)
        + f"; none beyond +-20%: {s.alltoall_20.total - s.alltoall_20.hit} beyond "
        + f"(worst {100 * s.alltoall.worst:.0f}%): "
        + mark(s.alltoall_20.hit == s.alltoall_20.total),
        f"- random patterns within +-10%: {s.random.text()} (target 85%): "
        + mark(s.random.share >= 0.85),
        f"- forced algorithms within +-15%: {s.forced.text()} (target 80%): "
        + mark(s.forced.share >= 0.8),
        f"- forced algorithms' order where medians differ by >10%: {s.order.text()}: "
        + mark(s.order.hit == s.order.total),
    ]
    if s.coverage.total:
        lines.append(
            f"- 80% intervals cover the measured median: {s.coverage.text()} (target 70-90%): "
            + mark(0.7 <= s.coverage.share <= 0.9)
        )
    p, r = s.precision(), s.recall()
    lines.append(
        f"- timeouts: precision {p:.2f}, recall {r:.2f} (tp {s.tp}, fp {s.fp}, fn {s.fn}; "
        "target 0.8 each): " + mark(not (p < 0.8) and not (r < 0.8) and s.tp + s.fn + s.fp > 0)
    )
    return lines
