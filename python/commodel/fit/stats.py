"""Statistics of repeated samples shared by measurement procedures and fits."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..errors import CommodelError


def central(values: Sequence[float], statistic: str = "median") -> float:
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
    arr = np.asarray(values, dtype=float)
    if arr.size < 2:
        return math.inf
    return float(arr.std(ddof=1) / math.sqrt(arr.size))


def relative_error(values: Sequence[float]) -> float:
    """Kielmann's "average error": standard error of the mean over the mean."""
    arr = np.asarray(values, dtype=float)
    if arr.size < 2:
        return math.inf
    mean = float(arr.mean())
    if mean == 0.0:
        return 0.0
    return float(arr.std(ddof=1) / math.sqrt(arr.size) / abs(mean))
