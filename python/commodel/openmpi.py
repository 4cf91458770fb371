"""What Open MPI 4.1.4's coll/tuned component has, as commodel uses it: the algorithm
numbers and names of each collective (what ``coll_tuned_<coll>_algorithm`` forces and a
rules file names) with the generator that follows each, the message size its dynamic rules
are looked up with, and the segment sizes and fan-outs our generators assume.

Shared by ``advise`` (predictions, rules files), ``measure collective`` (forced runs) and
``report``; it imports none of them.
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
