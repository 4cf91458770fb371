"""What an MPI call sent, peer by peer, as the kernel counts it on the emulated cluster.

Every rank runs in its host's network namespace, so the TCP sockets it sees (``ss -tin``)
are its own host's. ``bytes_acked`` of each established connection on the data network
(198.18.0.0/16) counts the bytes that host sent on it and the peer acknowledged; summed per
peer address, read before and after one call with every rank quiet, the differences are
the call's traffic matrix. It works for any MPI whose ranks talk TCP (Intel MPI and MPICH
through libfabric's tcp provider, Open MPI's btl tcp), and counts what the MPI library
adds to each message (its headers, a few tens of bytes). One rank per host: with more, two
ranks' connections to one host are not told apart.

``python -m commodel.cluster.sockets COLL SIZES [ROOT]`` (under the cluster's launcher,
mpi4py) prints, per size, one JSON line on rank 0: ``{"collective", "size", "bytes":
[[bytes from rank s to rank d]]}`` of one call after a warm-up call.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from typing import Any

DATA_NET = "198.18."


def sent_by_peer(net: str = DATA_NET) -> tuple[str | None, dict[str, int]]:
    """This namespace's address on the data network (None if no connection) and the bytes
    acknowledged on its connections, per peer address."""
    try:
        out = subprocess.run(
            ["ss", "-tinHO", "state", "established"],
            capture_output=True, text=True, timeout=30, check=True,
        ).stdout  # fmt: skip
    except (OSError, subprocess.SubprocessError) as exc:
        raise RuntimeError(f"cannot run ss: {exc}") from None
    local, peers = None, {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) < 4 or not fields[2].startswith(net):
            continue
        local = fields[2].rsplit(":", 1)[0]
        peer = fields[3].rsplit(":", 1)[0]
        acked = re.search(r"bytes_acked:(\d+)", line)
        peers[peer] = peers.get(peer, 0) + (int(acked.group(1)) if acked else 0)
    return local, peers


def _call(MPI: Any, collective: str, size: int, root: int) -> Any:
    """A function making one call of ``collective`` with ``size`` bytes, as commodel counts
    sizes (the buffer for allreduce and bcast, a rank's block for allgather, the block to
    each rank for alltoall)."""
    import numpy as np

    comm = MPI.COMM_WORLD
    p = comm.size
    if collective == "allreduce":
        a, b = np.ones(size, np.uint8), np.empty(size, np.uint8)
        return lambda: comm.Allreduce(a, b, op=MPI.BOR)
    if collective == "bcast":
        a = np.ones(size, np.uint8)
        return lambda: comm.Bcast(a, root)
    if collective == "allgather":
        a, b = np.ones(size, np.uint8), np.empty(size * p, np.uint8)
        return lambda: comm.Allgather(a, b)
    if collective == "alltoall":
        a, b = np.ones(size * p, np.uint8), np.empty(size * p, np.uint8)
        return lambda: comm.Alltoall(a, b)
    raise SystemExit(f"sockets: unknown collective {collective!r}")


def _quiet(comm: Any) -> None:
    """Every rank past the call and its acknowledgements in (a barrier is a few bytes)."""
    comm.Barrier()
    time.sleep(0.2)
    comm.Barrier()


def call_bytes(comm: Any, call: Any) -> list[int] | None:
    """The bytes this rank sent to each rank of ``comm`` during ``call()`` (every rank calls
    this together), or None on every rank unless each rank is alone on its host with an
    address on the data network (the kernel's counts are per host and peer address)."""
    _quiet(comm)
    try:
        _local, before = sent_by_peer()
    except RuntimeError:
        before = None
    call()
    _quiet(comm)
    try:
        local, after = sent_by_peer()
    except RuntimeError:
        local, after = None, {}
    addresses = comm.allgather(local if before is not None else None)
    if None in addresses or len(set(addresses)) != len(addresses):
        return None
    return [after.get(a, 0) - before.get(a, 0) for a in addresses]


def main(argv: list[str]) -> int:
    from mpi4py import MPI

    if len(argv) not in (2, 3):
        print(
            "usage: python -m commodel.cluster.sockets COLL SIZE[,SIZE...] [ROOT]", file=sys.stderr
        )
        return 2
    collective, sizes = argv[0], [int(s) for s in argv[1].split(",")]
    root = int(argv[2]) if len(argv) == 3 else 0
    comm = MPI.COMM_WORLD
    for size in sizes:
        call = _call(MPI, collective, size, root)
        call()
        row = call_bytes(comm, call)
        if row is None:
            print("sockets: not one rank a host on the emulated cluster", file=sys.stderr)
            return 2
        rows = comm.gather(row, 0)
        if comm.rank == 0:
            line = {"collective": collective, "size": size, "ranks": comm.size, "bytes": rows}
            print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
