"""``measure many-to-one`` and ``measure one-to-many`` (Lastovetsky & O'Flynn, sections 3-5).

A flat tree rooted at rank 0 with n processes involved (the root and n-1 others, ranks
1..n-1), n = 3..P (``--n``):

* many-to-one: every other rank sends M bytes to the root. The root receives them as Open
  MPI 4.1.4's linear gather does (``ompi_coll_base_gather_intra_basic_linear``): one
  blocking receive after the other, in rank order (``receives: sequential``, the default).
  With ``receives: posted`` it posts every receive first and waits for all. The two differ
  above the eager limit: a rendezvous message waits for its receive, so sequential receives
  pace the senders one at a time, and posted receives let all of them send at once.
* one-to-many: the root sends M bytes to each other rank (Isend each, Waitall), and each
  answers with an empty message once it has received, so the root sees the last arrival.

Each repetition starts with an MPI_Barrier of all ranks and is timed on the root. The sweep
runs every size M (``--sizes``) for every n, ``--reps`` times, in the order n, M, repetition
(one step per (n, M)). Escalations are rare events, hence many repetitions.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

from ..errors import CommodelError
from .common import Context, increasing_sizes, kernel, sync_start
from .unit import Measurement, fill, option

TAG_DATA, TAG_ACK = 41, 42

DEFAULT_SIZES = [
    1024, 2048, 4096, 8192, 12288, 16384, 24576, 32768, 49152, 65536, 98304, 131072,
]  # fmt: skip

RECEIVES = ("sequential", "posted")


@dataclass(frozen=True)
class OneToManyOptions:
    """``measure one-to-many``'s options (the campaign's options in the results database)."""

    sizes: list[int] = option(
        DEFAULT_SIZES, "message sizes M, comma-separated (1KiB .. 128KiB)", kind="sizes"
    )
    n: list[int] | None = option(  # None: 3..P
        None, "process counts n including the root, comma-separated (3..P)", kind="counts"
    )
    reps: int = option(50, "repetitions per (n, M) (50)", kind="int")
    counts: int = option(
        0,
        "without --n: at most this many process counts, spread evenly from 3 to P, both "
        "included (0: every n from 3 to P)",
        kind="int",
    )


def spread_counts(ranks: int, at_most: int) -> list[int]:
    """3..``ranks``, or with ``at_most`` >= 2 at most that many of them, evenly spread and
    both ends included (12 ranks, 7: 3, 5, 6, 7, 9, 11, 12)."""
    ns = list(range(3, ranks + 1))
    if at_most < 2 or len(ns) <= at_most:
        return ns
    return sorted({ns[round(i * (len(ns) - 1) / (at_most - 1))] for i in range(at_most)})


@dataclass(frozen=True)
class Options(OneToManyOptions):
    """``measure many-to-one``'s options: one-to-many's, and how the root receives."""

    receives: str = option(
        "sequential",
        "how the root receives: one blocking receive after the other in rank "
        "order, as Open MPI's linear gather does (sequential, the default), or every "
        "receive posted first (posted); they differ above the eager limit",
        choices=RECEIVES,
    )


def validate_options(opts: dict[str, Any], direction: str = "many-to-one") -> dict[str, Any]:
    if direction != "many-to-one" and opts.get("receives") is not None:
        # the root of one-to-many sends
        raise CommodelError("--receives: only many-to-one has receives at the root")
    given = {k: v for k, v in opts.items() if k != "receives" or direction == "many-to-one"}
    out = fill(
        Options if direction == "many-to-one" else OneToManyOptions, given, f"measure {direction}"
    )
    out["sizes"] = increasing_sizes("--sizes", out["sizes"], least=0)
    if out["n"] is not None:
        ns = [int(n) for n in out["n"]]
        if not ns or min(ns) < 2 or sorted(set(ns)) != ns:
            raise CommodelError(f"--n must be increasing process counts >= 2, got {ns}")
        out["n"] = ns
    if int(out["reps"]) < 1:
        raise CommodelError(f"--reps must be >= 1, got {out['reps']}")
    if int(out.get("counts") or 0) < 0:
        raise CommodelError(f"--counts must be >= 0, got {out['counts']}")
    if "receives" in out and out["receives"] not in RECEIVES:
        raise CommodelError(
            f"--receives must be one of {', '.join(RECEIVES)}, got {out['receives']}"
        )
    return out


def _sits_out(ctx: Context, p: dict) -> bool:
    """The ranks beyond the n involved: they wait outside real-time scheduling."""
    return ctx.rank >= int(p["n"])


def _prepare(ctx: Context, p: dict) -> dict:
    """Every rank: the communicator of the n ranks involved (:meth:`Context.split`), and on
    those ranks the buffers."""
    p = dict(p)
    n = int(p["n"])
    p["sub"] = ctx.split(tuple(range(n)))
    m = 0 if _sits_out(ctx, p) else int(p["m"])
    p["buf"] = ctx.buffer(m, "send")
    p["rbuf"] = ctx.buffer(m * max(1, n - 1), "recv")
    return p


@kernel("m2o.flat", _prepare, _sits_out)
def _k_flat(ctx: Context, p: dict) -> Any:
    """The flat tree of ranks 0..n-1 (in their own communicator, rank order kept); the
    other ranks sit it out (:func:`_sits_out`)."""
    comm, MPI = p["sub"], ctx.MPI
    n, m, reps = int(p["n"]), int(p["m"]), int(p["reps"])
    gather = p["direction"] == "many-to-one"
    buf, rbuf = p["buf"], p["rbuf"]
    out = []
    for _ in range(reps):
        sync_start(comm)
        if ctx.rank == 0:
            t0 = MPI.Wtime()
            if gather and p["receives"] == "sequential":
                for s in range(1, n):
                    comm.Recv([rbuf[(s - 1) * m : s * m], m, MPI.BYTE], s, TAG_DATA)
            elif gather:
                reqs = [
                    comm.Irecv([rbuf[(s - 1) * m : s * m], m, MPI.BYTE], s, TAG_DATA)
                    for s in range(1, n)
                ]
                MPI.Request.Waitall(reqs)
            else:
                reqs = [comm.Isend([buf, m, MPI.BYTE], d, TAG_DATA) for d in range(1, n)]
                MPI.Request.Waitall(reqs)
                for d in range(1, n):
                    comm.Recv([rbuf, 0, MPI.BYTE], d, TAG_ACK)
            out.append(MPI.Wtime() - t0)
        elif ctx.rank < n:
            if gather:
                comm.Send([buf, m, MPI.BYTE], 0, TAG_DATA)
            else:
                comm.Recv([rbuf, m, MPI.BYTE], 0, TAG_DATA)
                comm.Send([buf, 0, MPI.BYTE], 0, TAG_ACK)
    return out if ctx.rank == 0 else None


def procedure(direction: str, opts: dict[str, Any]):
    def run(ctx: Context) -> dict[str, Any]:
        ns = opts["n"] or spread_counts(ctx.size, int(opts.get("counts") or 0))
        if not ns or max(ns) > ctx.size:
            raise CommodelError(
                f"measure {direction}: n (processes involved) must be <= the {ctx.size} ranks; "
                f"got {opts['n'] or 'none: run it on at least 3 ranks'}"
            )
        sizes, reps = opts["sizes"], int(opts["reps"])
        ctx.progress.grow(len(ns) * len(sizes))
        with ctx.phase(direction):
            for n in ns:
                for m in sizes:
                    key = f"{direction}/n={n}/m={m}"

                    def rows(outs, n=n, m=m):
                        return [
                            {
                                "phase": direction,
                                "pattern": "flat-tree",
                                "quantity": "time",
                                "size_bytes": m,
                                "n_ranks": n,
                                "repetition": i,
                                "value_s": v,
                                "src": None,
                                "dst": 0,
                                "hosts": ",".join(ctx.hosts[:n]),
                            }
                            for i, v in enumerate(outs[0])
                        ]

                    ctx.step(
                        key,
                        "m2o.flat",
                        {
                            "n": n,
                            "m": m,
                            "reps": reps,
                            "direction": direction,
                            "receives": opts.get("receives"),
                        },
                        rows=rows,
                        replay=lambda stored: [None],
                    )
                    ctx.progress.advance(1, f"{direction} n={n} M={m}")
        return {"campaign": ctx.campaign, "direction": direction}

    return run


def _measurement(direction: str, options: type, what: str) -> Measurement:
    return Measurement(
        name=direction,
        help=f"{direction} sweep over sizes M and process counts n (Lastovetsky)",
        description=f"Lastovetsky's {direction} experiments: {what}, for every size and "
        "every process count n (root included), many times.",
        options=options,
        validate=partial(validate_options, direction=direction),
        procedure=partial(procedure, direction),
        min_ranks=3,
    )


MANY_TO_ONE = _measurement(
    "many-to-one", Options, "every other rank sends M bytes to rank 0 (a linear gather)"
)
ONE_TO_MANY = _measurement(
    "one-to-many", OneToManyOptions, "rank 0 sends M bytes to every other rank (a linear scatter)"
)
