"""Open MPI 4.1.4's fixed decision (``commodel.openmpi.default_algorithm``) at the switch
points of coll_tuned_decision_fixed.c: each pair is the last size below a threshold and
the threshold, where a wrong "<" or a shifted row would show."""

from __future__ import annotations

import pytest

from commodel.openmpi import FIXED_DECISION, default_algorithm

CASES = [
    # bcast, P in [8, 16): knomial < 4096 <= binary_tree < 16384 <= binomial < 32768 <= linear
    ("bcast", 8, 4095, 7),
    ("bcast", 8, 4096, 5),
    ("bcast", 8, 16383, 5),
    ("bcast", 8, 16384, 6),
    ("bcast", 8, 32767, 6),
    ("bcast", 8, 32768, 1),
    ("bcast", 15, 1048576, 1),
    # P = 7 is the row below: binomial from 2 KiB, basic_linear from 8 KiB, chain from 1 MiB
    ("bcast", 7, 2047, 5),
    ("bcast", 7, 2048, 6),
    ("bcast", 7, 8192, 1),
    ("bcast", 7, 1048575, 1),
    ("bcast", 7, 1048576, 2),
    # P in [16, 32): knomial < 4096 <= binomial < 1 MiB <= scatter_allgather
    ("bcast", 16, 4095, 7),
    ("bcast", 16, 4096, 6),
    ("bcast", 16, 1048575, 6),
    ("bcast", 16, 1048576, 8),
    # allreduce (commutative), P in [8, 16): recursive_doubling < 8192 <= rabenseifner
    ("allreduce", 8, 8191, 3),
    ("allreduce", 8, 8192, 6),
    ("allreduce", 16, 63, 5),
    ("allreduce", 16, 64, 3),
    ("allreduce", 16, 4095, 3),
    ("allreduce", 16, 4096, 6),
    ("allreduce", 2, 262143, 5),
    ("allreduce", 2, 262144, 6),
    # alltoall: the per-rank size, P in [8, 16): linear_sync < 256 KiB <= linear
    ("alltoall", 8, 262143, 4),
    ("alltoall", 8, 262144, 1),
    ("alltoall", 16, 8191, 4),
    ("alltoall", 16, 8192, 1),
    ("alltoall", 16, 32768, 4),
    ("alltoall", 2, 4095, 5),
    ("alltoall", 2, 4096, 2),
    ("alltoall", 3, 4096, 4),
    # allgather: two_proc on 2 ranks only, recursive_doubling up to 31, then neighbor
    ("allgather", 2, 1048576, 6),
    ("allgather", 3, 1024, 3),
    ("allgather", 31, 1048576, 3),
    ("allgather", 32, 1023, 3),
    ("allgather", 32, 1024, 5),
    ("allgather", 32, 65536, 4),
    # gather, scatter, barrier
    ("gather", 4, 1023, 2),
    ("gather", 4, 1024, 1),
    ("gather", 7, 262144, 3),
    ("gather", 8, 262144, 2),
    ("scatter", 8, 16383, 2),
    ("scatter", 8, 16384, 3),
    ("scatter", 16, 16384, 1),
    ("barrier", 3, 0, 3),
    ("barrier", 4, 0, 1),
    ("barrier", 8, 0, 3),
    ("barrier", 64, 0, 4),
]


@pytest.mark.parametrize("collective,ranks,size,algorithm", CASES)
def test_fixed_decision_at_the_source_switch_points(collective, ranks, size, algorithm):
    assert default_algorithm(collective, ranks, size) == algorithm


def test_every_row_ends_with_a_catch_all_and_grows():
    for collective, rows in FIXED_DECISION.items():
        assert rows[-1][0] is None, collective
        bounds = [p for p, _ in rows[:-1]]
        assert bounds == sorted(bounds) and len(set(bounds)) == len(bounds), collective
        for _p, rules in rows:
            assert rules[-1][0] is None, collective
            sizes = [m for m, _ in rules[:-1]]
            assert sizes == sorted(sizes) and len(set(sizes)) == len(sizes), collective


@pytest.mark.parametrize("collective", ["bcast", "gather"])
def test_the_engine_uses_the_same_fixed_decision(collective):
    # the engine's composed collectives (allgather linear = gather + bcast) pick their parts
    # by their own transcription of the same rules (collectives/fixed.rs): the two agree at
    # every P up to 1100 and at each power of two and its neighbours up to 16 MiB
    from commodel import _engine

    sizes = sorted({max(0, (1 << k) + d) for k in range(25) for d in (-1, 0, 1)})
    for p in range(2, 1100):
        for size in sizes:
            engine = _engine.fixed_decision(collective, p, size)
            assert engine == default_algorithm(collective, p, size), (collective, p, size)
    assert _engine.fixed_decision("alltoall", 8, 1024) is None
