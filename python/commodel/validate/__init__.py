"""Validation of the models against measurements (``commodel validate``, docs/validation.md).

:mod:`commodel.stats` holds the statistics (relative errors, fractions within a tolerance,
histograms), :mod:`.matching` pairs measured and predicted messages, :mod:`.pattern_results` reads
``measure pattern`` results from a results database, :mod:`.runner` measures (through
``cluster mpirun``), predicts and writes the report.
"""

from __future__ import annotations

from ..stats import ErrorSummary, histogram, relative_error, summarize, within
from .matching import match_messages

__all__ = [
    "ErrorSummary",
    "histogram",
    "match_messages",
    "relative_error",
    "summarize",
    "within",
]
