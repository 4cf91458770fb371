"""The held-out study's fixed workload: what is measured on every cluster.

* **Alltoall A and B**, 16 KiB-1 MiB per pair: PlogPT's A (one partner at a time) and B
  (every receive posted, then the sends). On a power of two of ranks the XOR exchanges of
  the paper (``alltoall-xor-pairwise``, ``alltoall-xor-post-all``), otherwise Open MPI's
  shifted pairwise (``alltoall-pairwise``) and linear (``alltoall-basic-linear``), which
  are the same two disciplines for any P.
* **Random patterns** (Zhu et al. section 7): ``random-pairs`` of degree d = 1, 2, 3 at
  256 KiB, :data:`RANDOM_TRIALS` schedules each.
* **Forced Open MPI algorithms**: every coll/tuned algorithm of allreduce, bcast, allgather
  and alltoall that has a generator, forced one per mpirun, at :data:`FORCED_SIZES`.

Schedules are written as GOAL files whose names carry their family and size, as
``commodel validate`` reads them (``alltoall-a-64KiB.goal``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

KiB = 1024
ALLTOALL_SIZES = tuple(KiB << k for k in range(4, 11))  # 16 KiB .. 1 MiB
RANDOM_SIZE = 256 * KiB
RANDOM_DEGREES = (1, 2, 3)
RANDOM_TRIALS = 3
FORCED_COLLECTIVES = ("allreduce", "bcast", "allgather", "alltoall")
FORCED_SIZES = (2 * KiB, 32 * KiB, 256 * KiB)


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


def write_schedules(ranks: int, outdir: str) -> list[Schedule]:
    """Write every GOAL file of the workload for ``ranks`` ranks into ``outdir``."""
    from ..schedules import collective, write_goal

    os.makedirs(outdir, exist_ok=True)
    out = []
    for label, gen in alltoall_generators(ranks).items():
        for size in ALLTOALL_SIZES:
            path = os.path.join(outdir, f"alltoall-{label}-{size_label(size)}.goal")
            if not os.path.exists(path):
                write_goal(collective(gen, ranks, size), path)
            out.append(Schedule("alltoall", f"{label}-{size_label(size)}", path, gen, size))
    for d in RANDOM_DEGREES:
        for t in range(RANDOM_TRIALS):
            seed = 100 * d + t
            path = os.path.join(outdir, f"random-d{d}-s{seed}-{size_label(RANDOM_SIZE)}.goal")
            if not os.path.exists(path):
                sched = collective("random-pairs", ranks, RANDOM_SIZE, seed=seed, degree=d)
                write_goal(sched, path)
            out.append(Schedule("random", f"d{d}-s{seed}", path, "random-pairs", RANDOM_SIZE))
    return out


# Repetitions: `measure pattern --max-reps` per schedule; `measure collective` per size.
PATTERN_REPS = 6
FORCED_MIN_REPS = 5
FORCED_MAX_REPS = 10
