"""What Open MPI 4.1.4's coll/tuned component has, as commodel uses it: the algorithm
numbers and names of each collective (what ``coll_tuned_<coll>_algorithm`` forces and a
rules file names) with the generator that follows each, the message size its dynamic rules
are looked up with, and the segment sizes and fan-outs our generators assume.

Shared by ``advise`` (predictions, rules files), ``measure collective`` (forced runs) and
``report``; it imports none of them. Beside coll/tuned, one fact of its TCP transport:
:data:`EAGER_LIMIT`, which ``measure`` and ``fit`` need.
"""

from __future__ import annotations

# Open MPI 4.1.4's algorithm numbers and names per collective (the
# coll_tuned_<coll>_algorithms tables), with the commodel generator that follows it
# (None: no generator yet).
ALGORITHMS: dict[str, list[tuple[int, str, str | None]]] = {
    "alltoall": [
        (1, "linear", "alltoall-basic-linear"),
        (2, "pairwise", "alltoall-pairwise"),
        (3, "modified_bruck", "alltoall-modified-bruck"),
        (4, "linear_sync", "alltoall-linear-sync"),
        (5, "two_proc", "alltoall-two-proc"),
    ],
    "allgather": [
        (1, "linear", "allgather-linear"),
        (2, "bruck", "allgather-bruck"),
        (3, "recursive_doubling", "allgather-recursive-doubling"),
        (4, "ring", "allgather-ring"),
        (5, "neighbor", "allgather-neighbor"),
        (6, "two_proc", "allgather-two-proc"),
    ],
    "allreduce": [
        (1, "basic_linear", "allreduce-basic-linear"),
        (2, "nonoverlapping", "allreduce-nonoverlapping"),
        (3, "recursive_doubling", "allreduce-recursive-doubling"),
        (4, "ring", "allreduce-ring"),
        (5, "segmented_ring", "allreduce-segmented-ring"),
        (6, "rabenseifner", "allreduce-rabenseifner"),
    ],
    "bcast": [
        (1, "basic_linear", "bcast-basic-linear"),
        (2, "chain", "bcast-chain"),
        (3, "pipeline", "bcast-pipeline"),
        (4, "split_binary_tree", "bcast-split-binary-tree"),
        (5, "binary_tree", "bcast-binary-tree"),
        (6, "binomial", "bcast-binomial"),
        (7, "knomial", "bcast-knomial"),
        (8, "scatter_allgather", "bcast-scatter-allgather"),
        (9, "scatter_allgather_ring", "bcast-scatter-allgather-ring"),
    ],
    "gather": [
        (1, "basic_linear", "gather-basic-linear"),
        (2, "binomial", "gather-binomial"),
        (3, "linear_sync", "gather-linear-sync"),
    ],
    "scatter": [
        (1, "basic_linear", "scatter-basic-linear"),
        (2, "binomial", "scatter-binomial"),
        (3, "linear_nb", "scatter-linear-nb"),
    ],
    "barrier": [
        (1, "linear", "barrier-linear"),
        (2, "double_ring", "barrier-double-ring"),
        (3, "recursive_doubling", "barrier-recursive-doubling"),
        (4, "bruck", "barrier-dissemination"),
        (5, "two_proc", "barrier-two-proc"),
        (6, "tree", "barrier-tree"),
    ],
}

# Collectives whose rule message size is the per-rank size times the communicator size.
_TIMES_COMM_SIZE = ("alltoall", "allgather", "gather", "scatter")


def rule_message_size(collective: str, size: int, comm_size: int) -> int:
    """The "message size" Open MPI 4.1.4 looks up in the rules for one call.

    ``size`` is the size as commodel's generators count it (bytes to each rank for
    alltoall; bytes each rank contributes for allgather, gather, scatter; the whole buffer
    for allreduce and bcast). ``coll_tuned_decision_dynamic.c`` uses datatype size x count x
    communicator size for alltoall, allgather, gather and scatter, datatype size x count for
    allreduce and bcast, and 0 for barrier.
    """
    if collective == "barrier":
        return 0
    if collective in _TIMES_COMM_SIZE:
        return size * comm_size
    return size


# Segment sizes the rules file passes with an algorithm, so that Open MPI runs what the
# generator predicted: bcast-pipeline's default 8 KiB segments, gather-linear-sync's
# default 1 KiB first segment. Everything else unsegmented (0).
SEGSIZE = {("bcast", 3): 8192, ("gather", 3): 1024}

# Fan-in/out the rules file passes with an algorithm: Open MPI 4.1.4's bcast chain takes
# its number of chains from the rule (a forced run: coll_tuned_bcast_algorithm_chain_fanout,
# 4), and 0 would make it a single chain; bcast-chain predicts 4 chains. Everything else 0.
FANINOUT = {("bcast", 2): 4}


def algorithm_label(collective: str, number: int) -> str:
    if number == 0:
        return "default"
    for n, alg, _gen in ALGORITHMS[collective]:
        if n == number:
            return alg
    return str(number)


# Open MPI 4.1.4's fixed decision (coll_tuned_decision_fixed.c, the default without dynamic
# rules): per collective, branches on the communicator size P, each a list of (P below,
# message rules), the last branch for every larger P; per branch the message rules
# (m below, algorithm), the last one (None, algorithm) for every larger m. A branch bound
# of 3 stands for the source's "P == 2" (a communicator of 1 never reaches coll/tuned).
# The message size m is datatype size x count, per rank for alltoall, allgather, gather and
# scatter (unlike the dynamic rules, not times P) and the whole buffer for allreduce and
# bcast: exactly the size as commodel's generators count it. Allreduce is its commutative
# branch (MPI_SUM). Every algorithm runs with faninout 0 and segsize 0 (unsegmented; the
# bcast knomial radix is coll_tuned_bcast_knomial_radix, 4).
_M = list[tuple[int | None, int]]
FIXED_DECISION: dict[str, list[tuple[int | None, _M]]] = {
    "allreduce": [
        (4, [(8, 4), (4096, 3), (8192, 4), (16384, 3), (65536, 4), (262144, 5), (None, 6)]),
        (8, [(16, 4), (8192, 3), (None, 6)]),
        (16, [(8192, 3), (None, 6)]),
        (32, [(64, 5), (4096, 3), (None, 6)]),
        (64, [(128, 5), (None, 6)]),
        (128, [(262144, 3), (None, 6)]),
        (256, [(131072, 2), (262144, 3), (None, 6)]),
        (512, [(4096, 2), (None, 6)]),
        (2048, [(2048, 2), (16384, 3), (None, 6)]),
        (4096, [(2048, 2), (4096, 5), (16384, 3), (None, 6)]),
        (None, [(2048, 2), (16384, 5), (32768, 3), (None, 6)]),
    ],
    "alltoall": [
        (
            3,
            [
                (2, 2),
                (4, 5),
                (16, 2),
                (64, 5),
                (256, 2),
                (4096, 5),
                (32768, 2),
                (262144, 4),
                (1048576, 5),
                (None, 2),
            ],
        ),
        (8, [(8192, 4), (16384, 1), (65536, 4), (524288, 1), (1048576, 2), (None, 1)]),
        (16, [(262144, 4), (None, 1)]),
        (32, [(4, 4), (512, 3), (8192, 4), (32768, 1), (262144, 4), (524288, 1), (None, 4)]),
        (64, [(512, 3), (524288, 1), (None, 4)]),
        (128, [(1024, 3), (2048, 1), (4096, 4), (262144, 1), (None, 2)]),
        (256, [(1024, 3), (2048, 4), (262144, 1), (None, 2)]),
        (512, [(1024, 3), (8192, 4), (32768, 1), (None, 2)]),
        (1024, [(512, 3), (8192, 4), (16384, 1), (131072, 4), (262144, 1), (None, 2)]),
        (2048, [(512, 3), (1024, 4), (2048, 1), (16384, 4), (262144, 1), (None, 4)]),
        (4096, [(1024, 3), (4096, 4), (8192, 1), (131072, 4), (None, 1)]),
        (None, [(2048, 3), (8192, 4), (16384, 1), (32768, 4), (65536, 1), (None, 4)]),
    ],
    "allgather": [
        (3, [(None, 6)]),
        (32, [(None, 3)]),
        (64, [(1024, 3), (65536, 5), (None, 4)]),
        (128, [(512, 3), (65536, 5), (None, 4)]),
        (256, [(512, 3), (131072, 5), (524288, 4), (1048576, 5), (None, 4)]),
        (512, [(32, 3), (128, 2), (1024, 3), (131072, 5), (524288, 4), (1048576, 5), (None, 4)]),
        (1024, [(64, 3), (256, 2), (2048, 3), (None, 5)]),
        (2048, [(4, 3), (8, 2), (16, 3), (32, 2), (256, 3), (512, 2), (4096, 3), (None, 5)]),
        (4096, [(32, 2), (128, 3), (512, 2), (4096, 3), (None, 5)]),
        (None, [(2, 3), (8, 2), (16, 3), (512, 2), (4096, 3), (None, 5)]),
    ],
    "bcast": [
        (
            4,
            [
                (32, 3),
                (256, 5),
                (512, 3),
                (1024, 7),
                (32768, 1),
                (131072, 5),
                (262144, 2),
                (524288, 1),
                (1048576, 6),
                (None, 5),
            ],
        ),
        (8, [(64, 5), (128, 6), (2048, 5), (8192, 6), (1048576, 1), (None, 2)]),
        (16, [(8, 7), (64, 5), (4096, 7), (16384, 5), (32768, 6), (None, 1)]),
        (32, [(4096, 7), (1048576, 6), (None, 8)]),
        (64, [(2048, 6), (None, 7)]),
        (128, [(None, 7)]),
        (256, [(2, 6), (16384, 5), (32768, 1), (65536, 5), (None, 7)]),
        (1024, [(16384, 7), (32768, 4), (None, 7)]),
        (2048, [(524288, 7), (None, 8)]),
        (4096, [(262144, 7), (None, 8)]),
        (None, [(8192, 7), (16384, 5), (262144, 7), (None, 8)]),
    ],
    "gather": [
        (4, [(2, 3), (4, 1), (32768, 2), (65536, 1), (131072, 2), (None, 3)]),
        (8, [(1024, 2), (8192, 1), (32768, 2), (262144, 1), (None, 3)]),
        (256, [(None, 2)]),
        (512, [(2048, 2), (8192, 1), (None, 2)]),
        (None, [(None, 2)]),
    ],
    "scatter": [
        (4, [(2, 3), (131072, 1), (262144, 3), (None, 1)]),
        (8, [(2048, 2), (4096, 1), (8192, 2), (32768, 1), (1048576, 3), (None, 1)]),
        (16, [(16384, 2), (1048576, 3), (None, 1)]),
        (32, [(16384, 2), (32768, 1), (None, 3)]),
        (64, [(512, 2), (8192, 3), (16384, 2), (None, 3)]),
        (None, [(512, 2), (None, 3)]),
    ],
    "barrier": [
        (4, [(None, 3)]),
        (8, [(None, 1)]),
        (64, [(None, 3)]),
        (256, [(None, 4)]),
        (512, [(None, 6)]),
        (1024, [(None, 4)]),
        (4096, [(None, 6)]),
        (None, [(None, 4)]),
    ],
}


def default_algorithm(collective: str, comm_size: int, size: int) -> int:
    """The algorithm number Open MPI 4.1.4 runs without dynamic rules (its fixed decision,
    :data:`FIXED_DECISION`) for a communicator of ``comm_size`` >= 2 ranks and ``size``
    bytes as commodel's generators count it (ignored for barrier)."""
    for p_below, rules in FIXED_DECISION[collective]:
        if p_below is None or comm_size < p_below:
            for m_below, alg in rules:
                if m_below is None or size < m_below:
                    return alg
    raise AssertionError("unreachable: every table ends with (None, ...)")


# Open MPI's btl_tcp_eager_limit (64 KiB, its default, headers included): messages from here
# on go by rendezvous (the sender waits for the receive to be posted).
EAGER_LIMIT = 65536
