"""Pure comparison and statistics functions of ``commodel validate`` (no I/O, no numpy).

Conventions (docs/validation.md):

* the relative error of a prediction ``p`` of a measured value ``m`` is ``(p - m) / m``
  (positive: the model is too slow, negative: too fast);
* a prediction is *within* a tolerance ``tol`` (0.10 for +-10%) when ``|p - m| <= tol * m``;
* measured messages are matched to predicted ones by ``(src, dst, tag, bytes)`` and, among
  messages with the same key, by order (MPI's non-overtaking rule: the k-th send from src to
  dst with a tag matches the k-th receive).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import CommodelError

TOLERANCE = 0.10

MessageKey = tuple[int, int, int, int]  # src, dst, tag, bytes


def relative_error(predicted: float, measured: float) -> float:
    """``(predicted - measured) / measured``; the measured value must be > 0."""
    if not measured > 0:
        raise CommodelError(f"cannot compare with a measured time of {measured!r} s (must be > 0)")
    return (predicted - measured) / measured


def within(predicted: float, measured: float, tol: float = TOLERANCE) -> bool:
    """Whether ``predicted`` is within ``tol`` (relative) of ``measured``."""
    # a small absolute slack so that e.g. 1.1 vs 1.0 at tol 0.1 counts despite rounding
    return abs(predicted - measured) <= tol * measured * (1 + 1e-12)


def median(values: Sequence[float]) -> float:
    """The median (mean of the two middle values for an even count)."""
    if not values:
        raise CommodelError("median of no values")
    s = sorted(values)
    n = len(s)
    mid = n // 2
    return s[mid] if n % 2 else (s[mid - 1] + s[mid]) / 2


@dataclass(frozen=True)
class ErrorSummary:
    """Statistics of a set of (predicted, measured) pairs."""

    count: int
    within: int
    fraction_within: float  # within / count (nan when count == 0)
    mean_abs_error: float  # mean of |relative error|
    mean_error: float  # mean signed relative error (bias)
    worst_error: float  # the signed relative error of largest magnitude
    tolerance: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "within": self.within,
            "fraction_within": self.fraction_within,
            "mean_abs_error": self.mean_abs_error,
            "mean_error": self.mean_error,
            "worst_error": self.worst_error,
            "tolerance": self.tolerance,
        }


def summarize(pairs: Iterable[tuple[float, float]], tol: float = TOLERANCE) -> ErrorSummary:
    """Summarize ``(predicted, measured)`` pairs: count within ``tol``, mean and worst error."""
    errors = []
    inside = 0
    for predicted, measured in pairs:
        errors.append(relative_error(predicted, measured))
        inside += within(predicted, measured, tol)
    if not errors:
        nan = float("nan")
        return ErrorSummary(0, 0, nan, nan, nan, nan, tol)
    worst = max(errors, key=abs)
    return ErrorSummary(
        count=len(errors),
        within=inside,
        fraction_within=inside / len(errors),
        mean_abs_error=sum(abs(e) for e in errors) / len(errors),
        mean_error=sum(errors) / len(errors),
        worst_error=worst,
        tolerance=tol,
    )


def histogram(
    errors: Iterable[float], width: float = 0.05, limit: float = 0.5
) -> list[tuple[float, float, int]]:
    """Counts of relative errors in bins of ``width`` from ``-limit`` to ``+limit``.

    Returns ``(low, high, count)`` rows; the first and last bins are open
    (``-inf, -limit`` and ``limit, inf``) so that no error is lost. A value on a boundary
    goes to the bin above it.
    """
    if width <= 0 or limit <= 0:
        raise CommodelError("histogram: width and limit must be > 0")
    nbins = int(round(2 * limit / width))
    edges = [-limit + i * width for i in range(nbins + 1)]
    counts = [0] * (nbins + 2)
    for e in errors:
        if e < -limit:
            counts[0] += 1
        elif e >= limit:
            counts[-1] += 1
        else:
            i = int(math.floor((e + limit) / width + 1e-9))
            counts[1 + min(i, nbins - 1)] += 1
    rows = [(-math.inf, -limit, counts[0])]
    rows += [(edges[i], edges[i + 1], counts[1 + i]) for i in range(nbins)]
    rows.append((limit, math.inf, counts[-1]))
    return rows


@dataclass(frozen=True)
class MeasuredMessage:
    """A message as measured: completion time of the receive (median over repetitions)."""

    src: int
    dst: int
    tag: int
    bytes: int
    end_s: float
    order: int = 0  # posting order at the receiver (op index)


@dataclass(frozen=True)
class PredictedMessage:
    src: int
    dst: int
    tag: int
    bytes: int
    end_s: float
    start_s: float = 0.0
    rto: bool = False


@dataclass(frozen=True)
class MessagePair:
    src: int
    dst: int
    tag: int
    bytes: int
    measured_s: float
    predicted_s: float
    rto: bool

    @property
    def error(self) -> float:
        return relative_error(self.predicted_s, self.measured_s)


def match_messages(
    measured: Sequence[MeasuredMessage], predicted: Sequence[PredictedMessage]
) -> list[MessagePair]:
    """Pair measured and predicted messages (module documentation); every one must match.

    A measured receive posted with any source or any tag (``src`` or ``tag`` < 0) cannot be
    paired reliably and is an error.
    """
    by_key: dict[MessageKey, list[PredictedMessage]] = defaultdict(list)
    for p in sorted(predicted, key=lambda m: (m.start_s, m.end_s)):
        by_key[(p.src, p.dst, p.tag, p.bytes)].append(p)
    used: dict[MessageKey, int] = defaultdict(int)
    out = []
    for m in sorted(measured, key=lambda m: (m.dst, m.order)):
        if m.src < 0 or m.tag < 0:
            raise CommodelError(
                f"rank {m.dst}: a receive from any source or with any tag cannot be matched "
                "to a predicted message; validate needs schedules with explicit peers and tags"
            )
        key = (m.src, m.dst, m.tag, m.bytes)
        k = used[key]
        if k >= len(by_key[key]):
            raise CommodelError(
                f"measured message {m.src} -> {m.dst} (tag {m.tag}, {m.bytes} B) has no "
                "predicted counterpart (is it the same schedule?)"
            )
        p = by_key[key][k]
        used[key] = k + 1
        out.append(MessagePair(m.src, m.dst, m.tag, m.bytes, m.end_s, p.end_s, p.rto))
    left = sum(len(v) for v in by_key.values()) - sum(used.values())
    if left:
        raise CommodelError(
            f"{left} predicted message(s) have no measured counterpart (is it the same schedule?)"
        )
    return out


def rto_repetitions(makespans: Sequence[float], rto_min_s: float) -> int:
    """Repetitions that took at least ``0.8 rto_min_s`` longer than the fastest one.

    On the emulated cluster (minimum RTO 200 ms, makespans of a few ms to a few hundred ms
    without loss) such a gap is a TCP retransmission timeout, not scheduling noise.
    """
    if not makespans:
        return 0
    best = min(makespans)
    return sum(1 for s in makespans if s - best >= 0.8 * rto_min_s)


def picks(
    times: dict[str, float | None],
) -> str | None:
    """The name of the smallest time among those not None (the algorithm a model picks)."""
    known = {k: v for k, v in times.items() if v is not None}
    if not known:
        return None
    return min(sorted(known), key=lambda k: known[k])
