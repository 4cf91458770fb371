"""The held-out study's fixed workload: what is measured on every cluster.

* **Alltoall A and B**, 16 KiB-1 MiB per pair: PlogPT's A (one partner at a time) and B
  (every receive posted, then the sends). On a power of two of ranks the XOR exchanges of
  the paper (``alltoall-xor-pairwise``, ``alltoall-xor-post-all``), otherwise Open MPI's
  shifted pairwise (``alltoall-pairwise``) and linear (``alltoall-basic-linear``), which
  are the same two disciplines for any P.
* **Random patterns** (Zhu et al. section 7): ``random-pairs`` of degree d = 1, 2, 3 at
  256 KiB, three schedules each.
* **Forced Open MPI algorithms**: every coll/tuned algorithm of allreduce, bcast, allgather
  and alltoall that has a generator, forced one per mpirun, at 2, 32 and 256 KiB.

That is :data:`FULL`; :data:`QUICK` is a few of each, for the tests.

Schedules are written as GOAL files whose names carry their family and size, as
``commodel validate`` reads them (``alltoall-a-64KiB.goal``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

KiB = 1024


@dataclass(frozen=True)
class Workload:
    """What is measured on every cluster of a study."""

    name: str
    alltoall_sizes: tuple[int, ...]
    random_size: int
    random_degrees: tuple[int, ...]
    random_trials: int
    forced_collectives: tuple[str, ...]
    forced_sizes: tuple[int, ...]
    pattern_reps: int  # `measure pattern --max-reps` per schedule
    forced_min_reps: int  # `measure collective` per size
    forced_max_reps: int


# issue 38's workload
FULL = Workload(
    name="full",
    alltoall_sizes=tuple(KiB << k for k in range(4, 11)),  # 16 KiB .. 1 MiB
    random_size=256 * KiB,
    random_degrees=(1, 2, 3),
    random_trials=3,
    forced_collectives=("allreduce", "bcast", "allgather", "alltoall"),
    forced_sizes=(2 * KiB, 32 * KiB, 256 * KiB),
    pattern_reps=6,
    forced_min_reps=5,
    forced_max_reps=10,
)
# a few minutes on a small cluster: the tests' (every part of the pipeline, little of it)
QUICK = Workload(
    name="quick",
    alltoall_sizes=(16 * KiB, 64 * KiB),
    random_size=64 * KiB,
    random_degrees=(2,),
    random_trials=1,
    forced_collectives=("allreduce",),
    forced_sizes=(32 * KiB,),
    pattern_reps=5,  # measure pattern takes at least 5 (its min_reps)
    forced_min_reps=3,
    forced_max_reps=3,
)
WORKLOADS = {w.name: w for w in (FULL, QUICK)}


def size_label(size: int) -> str:
    for unit, factor in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor}{unit}"
    return f"{size}B"


def alltoall_generators(ranks: int) -> dict[str, str]:
    """Alltoall A and B for ``ranks`` ranks: generator names by label."""
    if ranks >= 2 and ranks & (ranks - 1) == 0:
        return {"a": "alltoall-xor-pairwise", "b": "alltoall-xor-post-all"}
    return {"a": "alltoall-pairwise", "b": "alltoall-basic-linear"}


@dataclass(frozen=True)
class Schedule:
    """One GOAL file of the workload: its part, label and path."""

    part: str  # "alltoall" or "random"
    label: str  # "a-64KiB", "d2-s1"
    path: str
    generator: str
    size: int


def write_schedules(ranks: int, outdir: str, work: Workload = FULL) -> list[Schedule]:
    """Write every GOAL file of ``work`` for ``ranks`` ranks into ``outdir``."""
    from ..schedules import collective, write_goal

    os.makedirs(outdir, exist_ok=True)
    out = []
    for label, gen in alltoall_generators(ranks).items():
        for size in work.alltoall_sizes:
            path = os.path.join(outdir, f"alltoall-{label}-{size_label(size)}.goal")
            if not os.path.exists(path):
                write_goal(collective(gen, ranks, size), path)
            out.append(Schedule("alltoall", f"{label}-{size_label(size)}", path, gen, size))
    size = work.random_size
    for d in work.random_degrees:
        for t in range(work.random_trials):
            seed = 100 * d + t
            path = os.path.join(outdir, f"random-d{d}-s{seed}-{size_label(size)}.goal")
            if not os.path.exists(path):
                sched = collective("random-pairs", ranks, size, seed=seed, degree=d)
                write_goal(sched, path)
            out.append(Schedule("random", f"d{d}-s{seed}", path, "random-pairs", size))
    return out
