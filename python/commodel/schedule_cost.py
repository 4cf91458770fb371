"""What an advice (or ``predict --samples``) would cost, checked before anything is built.

The sizes, communicator sizes, splits and sample counts a user gives size the schedules
the engine generates and simulates: ``advise --collective bcast --sizes 4294967296`` asked
for a pipeline of 524,288 segments and reached 19.7 GB before it was killed. The cost of a
schedule is counted in *units*, an operation or a dependency edge (the engine holds one in
8 to 32 bytes and simulates one in about 0.5 us on this machine kind):

* every candidate: at most 4 P^2 + 16 P units (the all-to-all patterns send P - 1 messages
  per rank, every other algorithm fewer);
* a gather split into K sub-gathers: 4 K P more;
* a segmented algorithm (:data:`~commodel.openmpi.SEGSIZE`) with s = ceil(m / segment)
  segments: 4 P s + 2 s^2 more (the segmented bcasts make each segment wait on the earlier
  ones: 0.5 s^2 to 2 s^2 edges; bcast's pipeline at 8 KiB segments and 128 MiB, 1.9 GB).

A schedule may cost at most :data:`MAX_SCHEDULE_UNITS`, a whole advice (every candidate,
times the runs of each) at most :data:`MAX_TOTAL_UNITS`; a gather is split into at most
:data:`MAX_SPLITS` sub-gathers (65536 ran for 15 s at P = 8); beyond, a
:class:`~commodel.errors.CommodelError` says the limit and which value to lower.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from .errors import CommodelError
from .openmpi import SEGSIZE
from .units import format_size

# One schedule: 2**28 units (bcast's pipeline at 64 MiB, 0.5 GB, passes; at 128 MiB, 1.9 GB, not).
MAX_SCHEDULE_UNITS = 2**28
# Sub-gathers of a split gather: each is a round of P - 1 messages; Lastovetsky's
# k = ceil(M / M1) is 4096 for 4 MiB over M1 = 1 KiB.
MAX_SPLITS = 4096
# A whole advice: 2**32 units, about half an hour of simulation here.
MAX_TOTAL_UNITS = 2**32
# Runs of one schedule with the incast rule (predict --samples, advise --samples).
MAX_SAMPLES = 100_000


def schedule_units(
    collective: str,
    number: int,
    ranks: int,
    size: int,
    splits: int = 1,
    as_default: bool = False,
    segsize: Mapping[tuple[str, int], int] = SEGSIZE,
) -> int:
    """Units (operations and dependencies) of algorithm ``number`` of ``collective`` at
    (P, m), at most (see the module documentation); number 0 with ``splits``: a split gather."""
    p = ranks
    units = 4 * p * p + 16 * p
    if collective == "gather" and number == 0:
        units += 4 * splits * p
    segment = segsize.get((collective, number))
    if segment and not as_default:
        s = math.ceil(size / segment)
        units += 4 * p * s + 2 * s * s
    return units


def check_advice_cost(
    collective: str,
    items: Iterable[tuple[int, int, int, str, int, bool]],
    samples: int,
    segsize: Mapping[tuple[str, int], int] = SEGSIZE,
) -> None:
    """Refuse an advice whose candidates ``items`` ((P, m, number, generator, splits,
    as_default), as :func:`~commodel.advise.advice.advise` lists them), each run
    ``samples`` times (0: once), would cost more than the limits; ``segsize``: the segment
    sizes of the MPI's algorithms (:attr:`commodel.mpis.MPI.segsize`)."""
    check_samples(samples)
    total = 0
    for p, m, number, _gen, k, as_default in items:
        if collective == "gather" and number == 0 and k > MAX_SPLITS:
            raise CommodelError(
                f"advise: a gather split into {k} sub-gathers at P={p}, {format_size(m)}: at "
                f"most {MAX_SPLITS} (--splits, or the platform's many_to_one M1 and sizes)"
            )
        units = schedule_units(
            collective, number, p, m, k if number == 0 else 1, as_default, segsize
        )
        if units > MAX_SCHEDULE_UNITS:
            what = f"P={p}, {format_size(m)}"
            if collective == "gather" and number == 0:
                what += f", split into {k}"
            raise CommodelError(
                f"advise: the {collective} schedule at {what} would hold about {units:.3g} "
                f"operations and dependencies, more than the {MAX_SCHEDULE_UNITS} one schedule "
                "may (about 2 GB); give smaller --sizes, --ranks or --splits"
            )
        total += units * max(1, samples)
    if total > MAX_TOTAL_UNITS:
        raise CommodelError(
            f"advise: the advice would simulate about {total:.3g} operations and dependencies "
            f"in all, more than {MAX_TOTAL_UNITS} (about half an hour); give fewer or smaller "
            "--sizes, --ranks, --splits or --samples"
        )


def check_samples(samples: int) -> None:
    if samples > MAX_SAMPLES:
        raise CommodelError(f"--samples {samples}: at most {MAX_SAMPLES} runs")


def check_samples_cost(samples: int, units: int) -> None:
    """Refuse ``samples`` runs of a schedule of ``units`` operations and dependencies beyond
    :data:`MAX_TOTAL_UNITS` (``predict --samples``)."""
    check_samples(samples)
    if samples * units > MAX_TOTAL_UNITS:
        raise CommodelError(
            f"--samples {samples}: {samples} runs of a schedule of {units} operations would "
            f"simulate {samples * units:.3g}, more than {MAX_TOTAL_UNITS} (about half an hour)"
        )
