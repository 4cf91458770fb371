"""Validation of the models against measurements (``commodel validate``, docs/validation.md).

:mod:`.compare` holds the pure statistics (relative errors, fractions within a tolerance,
message matching, histograms), :mod:`.measured` reads ``measure pattern`` results from a
results database, :mod:`.runner` measures (through ``cluster mpirun``), predicts and
writes the report.
"""

from __future__ import annotations

from .compare import ErrorSummary, histogram, match_messages, relative_error, summarize, within

__all__ = [
    "ErrorSummary",
    "histogram",
    "match_messages",
    "relative_error",
    "summarize",
    "within",
]
