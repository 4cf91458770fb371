"""What one MPI call sent, peer by peer, as the MPI library itself counts it: Open MPI's
``pml/monitoring`` component, read through the MPI tool interface (MPI_T performance
variables ``pml_monitoring_messages_count`` and ``pml_monitoring_messages_size``, bound to
a communicator, one entry per peer).

The component counts every message the point-to-point layer sends, a collective's internal
ones included, with its packed size (``mca_common_monitoring_record_pml``). So the counts
before and after one collective call give the call's traffic matrix: messages and bytes
from this rank to each other one. A commodel generator follows Open MPI's algorithm message
by message, so the matrix of the algorithm that ran equals its schedule's
(:func:`schedule_traffic`): this is how ``advise --verify`` proves that a rules file fired,
and how the tests check the transcribed default decision against the compiled one.

It needs ``--mca pml_monitoring_enable 1`` on the mpirun line, and the component in the PML
selection (``--mca pml ob1,monitoring`` where the PML is restricted; the component is then stacked
on the PML that runs); mpi4py has no MPI_T interface, so the C functions are called through
ctypes in the MPI library already loaded. Open MPI only: other MPIs return None.
"""

from __future__ import annotations

import ctypes
from typing import Any

from ..mpis.library import loaded_libmpi

# MPI_T_PVAR_CLASS_SIZE in Open MPI's mpi.h (the enumeration STATE, LEVEL, SIZE, ...)
_CLASS_SIZE = 2
_NAMES = ("pml_monitoring_messages_count", "pml_monitoring_messages_size")

# the component on, and in the PML selection: a launcher that restricts the PML to ob1 (as
# `commodel cluster mpirun` does) leaves it out, and the counters are then missing
MONITORING_MCA = (("pml_monitoring_enable", "1"), ("pml", "ob1,monitoring"))


class Counters:
    """Open handles on the two per-peer counters of ``comm`` (an mpi4py communicator)."""

    def __init__(self, lib: Any, session: ctypes.c_void_p, handles: list, size: int):
        self.lib, self.session, self.handles, self.size = lib, session, handles, size

    def read(self) -> tuple[list[int], list[int]]:
        """(messages, bytes) sent to each peer so far."""
        out = []
        for handle in self.handles:
            buf = (ctypes.c_size_t * self.size)()
            if self.lib.MPI_T_pvar_read(self.session, handle, buf) != 0:
                raise RuntimeError("MPI_T_pvar_read failed")
            out.append(list(buf))
        return out[0], out[1]

    def close(self) -> None:
        for handle in self.handles:
            self.lib.MPI_T_pvar_handle_free(self.session, ctypes.byref(handle))
        self.lib.MPI_T_pvar_session_free(ctypes.byref(self.session))
        self.lib.MPI_T_finalize()


def open_counters(MPI: Any) -> Counters | None:
    """The counters of MPI_COMM_WORLD's peers (Open MPI counts by world rank; bound to a
    duplicate of it, the handle allocation crashes in 5.0.11), or None where the MPI library
    has no such MPI_T variables (another MPI, Open MPI 4.1.4, which registers them but does
    not list them, or Open MPI 5 without ``pml_monitoring_enable``)."""
    comm = MPI.COMM_WORLD
    if "Open MPI" not in MPI.Get_library_version():
        return None
    lib = loaded_libmpi()
    if lib is None:
        return None
    provided = ctypes.c_int()
    if lib.MPI_T_init_thread(0, ctypes.byref(provided)) != 0:
        return None
    session = ctypes.c_void_p()
    if lib.MPI_T_pvar_session_create(ctypes.byref(session)) != 0:
        lib.MPI_T_finalize()
        return None
    handle_of_comm = ctypes.c_void_p(MPI._handleof(comm))
    handles = []
    for name in _NAMES:
        index, count, handle = ctypes.c_int(), ctypes.c_int(), ctypes.c_void_p()
        if lib.MPI_T_pvar_get_index(name.encode(), _CLASS_SIZE, ctypes.byref(index)) != 0:
            break
        rc = lib.MPI_T_pvar_handle_alloc(
            session, index, ctypes.byref(handle_of_comm), ctypes.byref(handle),
            ctypes.byref(count),
        )  # fmt: skip
        if rc != 0 or count.value != comm.Get_size():
            break
        lib.MPI_T_pvar_start(session, handle)  # continuous variables refuse: harmless
        handles.append(handle)
    counters = Counters(lib, session, handles, comm.Get_size())
    if len(handles) < len(_NAMES):
        counters.close()
        return None
    return counters


def schedule_traffic(schedule: Any) -> list[list[tuple[int, int]]]:
    """The traffic matrix of a commodel schedule: ``[src][dst] = (messages, bytes)``."""
    n = schedule.num_ranks
    out = [[(0, 0)] * n for _ in range(n)]
    for src in range(n):
        row = [[0, 0] for _ in range(n)]
        for op in schedule.rank_ops(src):
            if op[0] == "send":
                row[op[1]][0] += 1
                row[op[1]][1] += op[3]
        out[src] = [(c, b) for c, b in row]
    return out


# What an MPI library adds to a message, at most, where the kernel counted the bytes (its
# headers and libfabric's: 24-96 B a message measured under Intel MPI, 72 B on a message of
# 1 MiB), and what a barrier between the two readings sends. 200 B was too loose: a 1 KiB
# allreduce's recursive doubling (1072-1120 B a peer) then also fitted MPICH's
# reduce-scatter + allgather (512 B in 2 messages + 600 B).
HEADER_BYTES = 120


def traffic_fits(want: list[list[tuple[int, int]]], got: list[list[Any]]) -> bool:
    """Whether a measured matrix ``got`` ([src][dst] = (messages, bytes)) is a schedule's
    ``want`` (:func:`schedule_traffic`). Counted by the MPI library (messages known): equal.
    Counted by the kernel (messages None; :func:`commodel.cluster.sockets.call_bytes`):
    every pair of two ranks carried the schedule's bytes plus at most :data:`HEADER_BYTES`
    a message and one more (the barriers between the readings); a rank's bytes to itself
    are not compared (Intel MPI sends a rank's own alltoall block over its socket)."""
    if len(got) != len(want):
        return False
    if all(x[0] is not None for row in got for x in row):
        return [[tuple(x) for x in row] for row in got] == want
    for src, row in enumerate(got):
        for dst, (_count, nbytes) in enumerate(row):
            if src == dst:
                continue
            messages, expected = want[src][dst]
            if not expected <= nbytes <= expected + HEADER_BYTES * (messages + 1):
                return False
    return True
