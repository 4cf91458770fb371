"""Independent predictions on a thread pool, results in input order.

The engine releases the GIL while it parses, generates and simulates, so threads run
predictions on separate cores. Each simulation is single-threaded and deterministic, so
:func:`map_ordered` returns exactly what the sequential loop returns, and an error raised
for some item is the one the sequential loop would raise: that of the first failing item
in input order (the pool finishes or cancels the others first).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, TypeVar

from .errors import CommodelError

T = TypeVar("T")
R = TypeVar("R")


def usable_cores() -> int:
    """The number of cores this process may run on (its CPU affinity)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def map_ordered(fn: Callable[[T], R], items: Iterable[T], jobs: int | None = None) -> list[R]:
    """``[fn(x) for x in items]`` on ``jobs`` threads (default :func:`usable_cores`).

    ``jobs=1`` (or a single item) runs the plain loop in the calling thread.
    """
    if jobs is None:
        jobs = usable_cores()
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise CommodelError(f"jobs: expected a whole number >= 1, got {str(jobs)[:30]}")
    todo = list(items)
    if jobs == 1 or len(todo) <= 1:
        return [fn(x) for x in todo]
    with ThreadPoolExecutor(max_workers=min(jobs, len(todo))) as pool:
        futures = [pool.submit(fn, x) for x in todo]
        try:
            return [f.result() for f in futures]
        except BaseException:
            for f in futures:
                f.cancel()
            raise
