"""Independent predictions on a thread pool or on MPI processes, results in input order.

The engine releases the GIL while it parses, generates and simulates, so threads run
predictions on separate cores. Each simulation is single-threaded and deterministic, so
:func:`map_ordered` returns exactly what the sequential loop returns, and an error raised
for some item is the one the sequential loop would raise: that of the first failing item
in input order (the pool finishes or cancels the others first).

Across machines, the ``mpi`` executor (:func:`use_executor`, the CLI's ``--executor mpi``)
hands the items to ``mpi4py.futures.MPIPoolExecutor``: the workers are the other ranks of
``mpiexec -n N python -m mpi4py.futures -m commodel ...`` (N - 1 workers, on any hosts
``mpiexec`` places them). Each item and the function go to a worker by pickle, so the
function must be a module-level one (or a ``functools.partial`` of one); results come back
in input order, the same as one process's (docs/benchmarks.md, *Sweeps across machines*).

With ``cost`` (an estimate per item, any unit), the items are handed out most costly first
(ties in input order): a worker that takes the last item then does not leave the others
idle for the length of a large prediction (the longest-processing-time-first order of list
scheduling). Only the order of the work changes: results, and the error raised, are still
those of input order.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import Callable, TypeVar

from .errors import CommodelError

T = TypeVar("T")
R = TypeVar("R")

EXECUTORS = ("threads", "mpi")
_executor = "threads"


def use_executor(name: str) -> None:
    """Run :func:`map_ordered` on ``threads`` (this process) or ``mpi`` (the workers of
    ``python -m mpi4py.futures``)."""
    global _executor
    if name not in EXECUTORS:
        raise CommodelError(f"--executor {name[:30]}: expected one of {', '.join(EXECUTORS)}")
    _executor = name


def executor() -> str:
    """The executor :func:`map_ordered` uses."""
    return _executor


def _in_input_order(
    pool: Executor, fn: Callable[[T], R], todo: list[T], order: list[int]
) -> list[R]:
    """Submit ``todo``'s items to ``pool`` in ``order`` (indices), and return their results in
    input order: the first failing item in input order raises, the others are cancelled."""
    futures = {i: pool.submit(fn, todo[i]) for i in order}
    try:
        return [futures[i].result() for i in range(len(todo))]
    except BaseException:
        for f in futures.values():
            f.cancel()
        raise


def _map_mpi(fn: Callable[[T], R], todo: list[T], order: list[int]) -> list[R]:
    """``[fn(x) for x in todo]`` on the MPI workers, handed out in ``order``, in input order."""
    try:
        from mpi4py.futures import MPIPoolExecutor
    except ImportError as exc:  # mpi4py is the `measure` extra
        raise CommodelError(
            f"--executor mpi needs mpi4py ({exc}); pip install 'commodel[measure]'"
        ) from None
    with MPIPoolExecutor() as pool:
        # One item per message: predictions take far longer than a round trip.
        return _in_input_order(pool, fn, todo, order)


def usable_cores() -> int:
    """The number of cores this process may run on (its CPU affinity)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def map_ordered(
    fn: Callable[[T], R],
    items: Iterable[T],
    jobs: int | None = None,
    cost: Callable[[T], float] | None = None,
) -> list[R]:
    """``[fn(x) for x in items]`` on ``jobs`` threads (default :func:`usable_cores`), or on
    the MPI workers under :func:`use_executor` ``("mpi")`` (``jobs`` is then the workers').

    ``jobs=1`` (or a single item) runs the plain loop in the calling thread. ``cost``: an
    estimate of an item's work; the most costly are handed out first (module text).
    """
    if jobs is None:
        jobs = usable_cores()
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise CommodelError(f"jobs: expected a whole number >= 1, got {str(jobs)[:30]}")
    todo = list(items)
    order = list(range(len(todo)))
    if cost is not None:
        costs = [cost(x) for x in todo]
        order.sort(key=lambda i: -costs[i])  # stable: ties keep input order
    if _executor == "mpi" and len(todo) > 1:
        return _map_mpi(fn, todo, order)
    if jobs == 1 or len(todo) <= 1:
        return [fn(x) for x in todo]
    with ThreadPoolExecutor(max_workers=min(jobs, len(todo))) as pool:
        return _in_input_order(pool, fn, todo, order)
