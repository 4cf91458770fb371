"""Statistics shared by measurement, fitting, validation and reports.

Of repeated samples (measurement and fits): :func:`central` (mean, median or min),
:func:`standard_error` and :func:`relative_standard_error` (Kielmann's "average error",
the stopping rule of the PLogP measurement), :func:`split_modes` (the normal and the
escalated mode of bimodal samples), :func:`saturation_gap` (PLogP's g from n messages in a
row, for the measurement and its fit alike). numpy is imported inside them only.

Of predictions against measurements (docs/validation.md):

* the relative error of a prediction ``p`` of a measured value ``m`` is ``(p - m) / m``
  (positive: the model is too slow, negative: too fast);
* a prediction is *within* a tolerance ``tol`` (0.10 for +-10%) when ``|p - m| <= tol * m``;
* :func:`summarize` counts the pairs within a tolerance, :func:`histogram` bins errors.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import CommodelError

TOLERANCE = 0.10

#: What :func:`central` takes: the central value of repetitions.
STATISTICS = ("median", "mean", "min")


def saturation_gap(rtt_n: float, n: int) -> float:
    """g from a saturation run of n messages in a row: RTT_n / n."""
    if n < 1:
        raise ValueError("saturation needs n >= 1")
    return rtt_n / n


def central(values: Sequence[float], statistic: str = "median") -> float:
    """The ``mean``, ``median`` or ``min`` of ``values``."""
    import numpy as np

    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        raise ValueError("no samples")
    if statistic == "mean":
        return float(arr.mean())
    if statistic == "median":
        return float(np.median(arr))
    if statistic == "min":
        return float(arr.min())
    raise CommodelError(f"unknown statistic {statistic!r} (mean, median, min)")


def standard_error(values: Sequence[float]) -> float:
    """The standard error of the mean (infinite for fewer than two samples)."""
    import numpy as np

    arr = np.asarray(values, dtype=float)
    if arr.size < 2:
        return math.inf
    return float(arr.std(ddof=1) / math.sqrt(arr.size))


#: :func:`split_modes`: the gap before the escalated mode is more than GAP_FACTOR times the
#: spread (max - min) of the normal mode, and the escalated mode starts MIN_RISE above it.
GAP_FACTOR = 4.0
MIN_RISE = 0.2


def split_modes(
    values: Sequence[float],
    gap_factor: float = GAP_FACTOR,
    min_rise: float = MIN_RISE,
    min_group: int = 2,
) -> tuple[list[float], list[float]]:
    """Split repeated samples into the normal mode and an escalated one (a retransmission
    timeout, TCP loss recovery): ``(normal, escalated)``, ``escalated`` empty when the
    samples are unimodal.

    The rule: sort the samples x_1 <= ... <= x_n; a split after x_i (normal x_1..x_i,
    escalated x_{i+1}..x_n, each group at least ``min_group`` samples) is valid when the gap
    x_{i+1} - x_i exceeds ``gap_factor`` times the spread x_i - x_1 of the normal group and
    x_{i+1} > (1 + ``min_rise``) x_i. The valid split with the largest gap wins (the lowest
    i on ties). A heavy tail does not split: its gaps grow slowly and stay below a few times
    the spread of everything under them."""
    xs = sorted(float(v) for v in values)
    best: tuple[float, int] | None = None
    for i in range(min_group, len(xs) - min_group + 1):
        lo_top, hi_bottom = xs[i - 1], xs[i]
        gap = hi_bottom - lo_top
        valid = gap > gap_factor * (lo_top - xs[0]) and hi_bottom > (1.0 + min_rise) * lo_top
        if valid and (best is None or gap > best[0]):
            best = (gap, i)
    if best is None:
        return xs, []
    return xs[: best[1]], xs[best[1] :]


def relative_standard_error(values: Sequence[float]) -> float:
    """Kielmann's "average error": the standard error of the mean over the mean."""
    import numpy as np

    arr = np.asarray(values, dtype=float)
    if arr.size < 2:
        return math.inf
    mean = float(arr.mean())
    if mean == 0.0:
        return 0.0
    return float(arr.std(ddof=1) / math.sqrt(arr.size) / abs(mean))


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
