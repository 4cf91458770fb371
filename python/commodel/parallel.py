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
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
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


def _map_mpi(fn: Callable[[T], R], todo: list[T]) -> list[R]:
    """``[fn(x) for x in todo]`` on the MPI workers, in input order."""
    try:
        from mpi4py.futures import MPIPoolExecutor
    except ImportError as exc:  # mpi4py is the `measure` extra
        raise CommodelError(
            f"--executor mpi needs mpi4py ({exc}); pip install 'commodel[measure]'"
        ) from None
    with MPIPoolExecutor() as pool:
        # One item per message: predictions take far longer than a round trip.
        return list(pool.map(fn, todo, chunksize=1))


def usable_cores() -> int:
    """The number of cores this process may run on (its CPU affinity)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def map_ordered(fn: Callable[[T], R], items: Iterable[T], jobs: int | None = None) -> list[R]:
    """``[fn(x) for x in items]`` on ``jobs`` threads (default :func:`usable_cores`), or on
    the MPI workers under :func:`use_executor` ``("mpi")`` (``jobs`` is then the workers').

    ``jobs=1`` (or a single item) runs the plain loop in the calling thread.
    """
    if jobs is None:
        jobs = usable_cores()
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise CommodelError(f"jobs: expected a whole number >= 1, got {str(jobs)[:30]}")
    todo = list(items)
    if _executor == "mpi" and len(todo) > 1:
        return _map_mpi(fn, todo)
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
