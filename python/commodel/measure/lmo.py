"""``measure lmo``: the LMO point-to-point constants (Lastovetsky & O'Flynn, section 4.1).

T_ij(M) = C_i + t_i M + C_j + t_j M + M / beta_ij. Every rank is a node. Two experiments,
each timed on its root and repeated at several sizes M (``--sizes``):

* **pair** i -> j: i sends M bytes to j, j answers with an empty message. The roundtrip is
  RT_ij(M) = T_ij(M) + T_ji(0) = 2 (C_i + C_j) + M (t_i + t_j + 1/beta_ij).
* **triple** i -> {j, k}: i sends M bytes to j and to k at once (Isend, Isend, Waitall),
  both answer with an empty message. LMO's one-to-many model (section 4.2, small
  messages: the root serialises its processing, the transfers overlap) gives a per-byte
  slope of 2 t_i + max(t_j + 1/beta_ij, t_k + 1/beta_ik).

``fit`` solves the pair intercepts for C (least squares over all pairs), the triple slopes
for t (least squares), and 1/beta_ij from each pair slope (docs/measurement.md).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from ..errors import CommodelError
from ..stats import STATISTICS
from .common import Context, kernel
from .unit import Measurement, fill, option

TAG_DATA, TAG_REPLY = 31, 32
TRIPLES = ("all", "cover")


@dataclass(frozen=True)
class Options:
    """``measure lmo``'s options (the campaign's options in the results database)."""

    sizes: list[int] = option(
        [0, 8192, 32768], "message sizes, comma-separated (0,8KiB,32KiB)", kind="sizes"
    )
    reps: int = option(20, "roundtrips per experiment and size (20)", kind="int")
    statistic: str = option("median", "central value of repetitions (median)", choices=STATISTICS)
    triples: str = option(
        "all",
        "triples per root: all (every pair of the others, LMO's set: n C(n-1, 2) in all) or "
        "cover (the others in disjoint pairs, each once: n floor((n-1)/2)) (all)",
        choices=TRIPLES,
    )


def validate_options(opts: dict[str, Any]) -> dict[str, Any]:
    out = fill(Options, opts, "measure lmo")
    sizes = [int(s) for s in out["sizes"]]
    if len(sizes) < 2 or sorted(set(sizes)) != sizes or sizes[0] < 0:
        raise CommodelError(
            f"--sizes must be at least two increasing sizes >= 0 (a slope needs two), got {sizes}"
        )
    out["sizes"] = sizes
    if int(out["reps"]) < 1:
        raise CommodelError(f"--reps must be >= 1, got {out['reps']}")
    if out["triples"] not in TRIPLES:
        raise CommodelError(f"--triples must be all or cover, got {out['triples']!r}")
    if out["statistic"] not in ("mean", "median", "min"):
        raise CommodelError(f"--statistic must be mean, median or min, got {out['statistic']!r}")
    return out


def _prepare(ctx: Context, p: dict) -> dict:
    p = dict(p)
    biggest = max(int(m) for m in p["sizes"])
    p["buf"] = ctx.buffer(biggest, "send")
    p["rbuf"] = ctx.buffer(biggest, "recv")
    return p


def _sits_out(ctx: Context, p: dict) -> bool:
    """The ranks that are neither the experiment's root nor one of its destinations."""
    return ctx.rank != int(p["root"]) and ctx.rank not in p["dsts"]


@kernel("lmo.fanout", _prepare, _sits_out)
def _k_fanout(ctx: Context, p: dict) -> Any:
    """Per size m of ``sizes``, ``reps`` times: root sends m bytes to every destination at
    once; each answers empty. Root: the times, a list per size. The other ranks sit it out
    (:func:`_sits_out`), outside real-time scheduling."""
    comm, MPI = ctx.comm, ctx.MPI
    root, dsts, reps = int(p["root"]), list(p["dsts"]), int(p["reps"])
    buf, rbuf = p["buf"], p["rbuf"]
    out = []
    for m in (int(x) for x in p["sizes"]):
        if ctx.rank == root:
            times = []
            for _ in range(reps):
                t0 = MPI.Wtime()
                reqs = [comm.Isend([buf, m, MPI.BYTE], d, TAG_DATA) for d in dsts]
                MPI.Request.Waitall(reqs)
                for d in dsts:
                    comm.Recv([rbuf, 0, MPI.BYTE], d, TAG_REPLY)
                times.append(MPI.Wtime() - t0)
            out.append(times)
        elif ctx.rank in dsts:
            for _ in range(reps):
                comm.Recv([rbuf, m, MPI.BYTE], root, TAG_DATA)
                comm.Send([buf, 0, MPI.BYTE], root, TAG_REPLY)
    return out if ctx.rank == root else None


def experiments(size: int, triples: str = "all") -> list[tuple[int, tuple[int, ...]]]:
    """(root, destinations): every ordered pair, then every root with pairs of the others:
    every pair (``all``), or (``cover``) the others from the root on, i+1, i+2, ... mod n,
    in disjoint pairs, so that each appears once (one left out where n - 1 is odd). The fit
    takes t_i as the mean over the triples rooted at i (fit/lmo.py), which needs one; LMO's
    full set grows as n^3 and was most of calibrate's time on slow links."""
    out = [(i, (j,)) for i in range(size) for j in range(size) if i != j]
    for i in range(size):
        if triples == "cover":
            ring = [(i + k) % size for k in range(1, size)]
            out += [(i, tuple(sorted(ring[k : k + 2]))) for k in range(0, size - 2, 2)]
        else:
            others = [r for r in range(size) if r != i]
            out += [(i, pair) for pair in itertools.combinations(others, 2)]
    return out


def procedure(opts: dict[str, Any]):
    def run(ctx: Context) -> dict[str, Any]:
        if ctx.size < 3:
            raise CommodelError(
                f"measure lmo needs at least 3 ranks (triples separate t_i from beta_ij), "
                f"got {ctx.size}"
            )
        exps = experiments(ctx.size, opts["triples"])
        sizes = opts["sizes"]
        reps = int(opts["reps"])
        ctx.progress.grow(len(exps))
        with ctx.phase("lmo"):
            for root, dsts in exps:  # one step an experiment, every size in it
                pattern = "pair" if len(dsts) == 1 else "triple"
                key = f"lmo/{pattern}/{root}->{','.join(map(str, dsts))}"

                def rows(outs, root=root, dsts=dsts, pattern=pattern):
                    return [
                        {
                            "phase": "lmo",
                            "pattern": pattern,
                            "quantity": "roundtrip",
                            "size_bytes": m,
                            "n_ranks": 1 + len(dsts),
                            "repetition": i,
                            "value_s": v,
                            "src": root,
                            "dst": dsts[0],
                            "hosts": ",".join(ctx.hosts[r] for r in (root, *dsts)),
                            "extra": {"dsts": list(dsts)},
                        }
                        for m, times in zip(sizes, outs[root])
                        for i, v in enumerate(times)
                    ]

                ctx.step(
                    key,
                    "lmo.fanout",
                    {"root": root, "dsts": list(dsts), "sizes": list(sizes), "reps": reps},
                    rows=rows,
                    replay=lambda stored: [None],
                )
                ctx.progress.advance(1, f"lmo {pattern} {root}->{dsts}")
        return {"campaign": ctx.campaign, "hosts": ctx.hosts}

    return run


MEASUREMENT = Measurement(
    name="lmo",
    help="LMO constants C_i, t_i, beta_ij from pair and triple roundtrips (>= 3 ranks)",
    description="Lastovetsky's LMO point-to-point model: per-node fixed and per-byte "
    "delays C_i, t_i and link rates beta_ij, from roundtrips over every pair and triple.",
    options=Options,
    validate=validate_options,
    procedure=procedure,
    min_ranks=3,
)
