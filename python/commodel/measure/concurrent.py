"""``measure concurrent``: Zhu et al. (2012) section 5 - k flows sharing one NIC.

Ranks are grouped into nodes by host name. Node X is the host of rank 0, node Y the next
host; with a single host, the first and second half of the ranks stand in for X and Y
(loopback has no NIC to share, so the verdicts then describe the MPI/TCP stack only).
Experiments, for k = 1..K (K: ranks available on each side, ``--max-k``):

* ``uni``:   k flows X[i] -> Y[i] (the fairness property, section 5.1);
* ``in-k-out-1``: k flows Y[i] -> X[i] and one flow X[0] -> Y[0] at the same time
  (delta+ = k, delta- = 1 at X: the asymmetric property, section 5.2);
* ``in-k-out-k``: k flows each way between X[i] and Y[i].

Each repetition: a barrier, every receiver pre-posts its receive, every sender sends
``--size`` bytes (Zhu: >= 10 MB), every receiver times its flow from the barrier. As in
Zhu's benchmark (section 3.1) repetitions continue until the 95% confidence interval of
the mean of every flow is within 2% of that mean, or ``--max-reps``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..errors import CommodelError
from ..report.measure_tables import format_concurrent_result
from .common import Context, kernel, sync_start
from .unit import Measurement, fill, option

TAG_FLOW = 51


@dataclass(frozen=True)
class Options:
    """``measure concurrent``'s options (the campaign's options in the results database)."""

    size: int = option(16 << 20, "bytes per flow and repetition (16MiB)", kind="size")
    max_k: int | None = option(None, "largest number of flows k (all available)", kind="int")
    min_reps: int = option(3)
    max_reps: int = option(30, "repetition cap (30)", kind="int")
    ci: float = option(0.02)


def validate_options(opts: dict[str, Any]) -> dict[str, Any]:
    out = fill(Options, opts, "measure concurrent")
    if int(out["size"]) < 1:
        raise CommodelError(f"--size must be >= 1 byte, got {out['size']}")
    if int(out["max_reps"]) < int(out["min_reps"]):
        raise CommodelError(f"--max-reps must be >= {out['min_reps']}, got {out['max_reps']}")
    return out


def sides(hosts: list[str]) -> tuple[list[int], list[int], bool]:
    """The ranks of node X and node Y, and whether they are distinct hosts."""
    order: list[str] = []
    for h in hosts:
        if h not in order:
            order.append(h)
    if len(order) >= 2:
        x = [r for r, h in enumerate(hosts) if h == order[0]]
        y = [r for r, h in enumerate(hosts) if h == order[1]]
        return x, y, True
    half = len(hosts) // 2
    return list(range(half)), list(range(half, 2 * half)), False


def plan(
    x: list[int], y: list[int], max_k: int | None
) -> list[tuple[str, int, list[tuple[int, int]]]]:
    """(pattern, k, flows) of every experiment."""
    kmax = min(len(x), len(y))
    if max_k is not None:
        kmax = min(kmax, int(max_k))
    out = []
    for k in range(1, kmax + 1):
        out.append(("uni", k, [(x[i], y[i]) for i in range(k)]))
    for k in range(1, kmax + 1):
        out.append(("in-k-out-1", k, [(y[i], x[i]) for i in range(k)] + [(x[0], y[0])]))
    for k in range(1, kmax + 1):
        out.append(
            ("in-k-out-k", k, [(y[i], x[i]) for i in range(k)] + [(x[i], y[i]) for i in range(k)])
        )
    return out


def _prepare(ctx: Context, p: dict) -> dict:
    """Every rank: the communicator of the ranks with a flow (:meth:`Context.split`), and on
    those ranks the buffers."""
    p = dict(p)
    size = int(p["size"])
    p["active"] = tuple(sorted({r for f in p["flows"] for r in f}))
    p["sub"] = ctx.split(p["active"])
    mine = [f for f in p["flows"] if ctx.rank in f]
    p["buf"] = ctx.buffer(size if any(s == ctx.rank for s, _ in mine) else 0, "send")
    n_in = sum(1 for _, d in mine if d == ctx.rank)
    p["rbuf"] = ctx.buffer(size * max(n_in, 1) if n_in else 0, "recv")
    return p


def _sits_out(ctx: Context, p: dict) -> bool:
    """The ranks without a flow: they wait outside real-time scheduling, leaving the cores
    to the flows (a busy-polling idle rank takes CPU from them on a shared machine)."""
    return ctx.rank not in p["active"]


@kernel("zhu.flows", _prepare, _sits_out)
def _k_flows(ctx: Context, p: dict) -> Any:
    """Per repetition, the seconds each flow this rank receives took: [(flow, s), ...].
    The ranks with a flow talk in a communicator of their own; the others sit it out."""
    comm, MPI = p["sub"], ctx.MPI
    size, reps, flows = int(p["size"]), int(p["reps"]), p["flows"]
    sub = {r: i for i, r in enumerate(p["active"])}  # Split keeps the ranks' order
    incoming = [(i, sub[s]) for i, (s, d) in enumerate(flows) if d == ctx.rank]
    outgoing = [(i, sub[d]) for i, (s, d) in enumerate(flows) if s == ctx.rank]
    out = []
    for _ in range(reps):
        sync_start(comm)
        t0 = MPI.Wtime()
        rreqs = [
            comm.Irecv([p["rbuf"][j * size : (j + 1) * size], size, MPI.BYTE], src, TAG_FLOW)
            for j, (_, src) in enumerate(incoming)
        ]
        sreqs = [comm.Isend([p["buf"], size, MPI.BYTE], dst, TAG_FLOW) for _, dst in outgoing]
        times: dict[int, float] = {}
        pending = list(range(len(rreqs)))
        while pending:
            idx = MPI.Request.Waitany([rreqs[j] for j in pending])
            j = pending.pop(idx)
            times[incoming[j][0]] = MPI.Wtime() - t0
        MPI.Request.Waitall(sreqs)
        out.append(sorted(times.items()))
    return out


def flows_step(
    ctx: Context,
    key: str,
    phase: str,
    pattern: str,
    size: int,
    flows: list[tuple[int, int]],
    reps: int,
    first: int,
    n_msgs: int,
    group: int | None = None,
) -> Any:
    """One step of the ``zhu.flows`` kernel: ``reps`` repetitions of ``flows`` (src, dst;
    ``size`` bytes each) from a synchronized start. Stores one ``flow`` sample per flow and
    repetition (numbered from ``first``; ``group``, if given, in its extra); ``per_rank`` of
    the result holds, per rank and repetition, [(flow index, seconds)] of the flows the rank
    received (replayed: one list). Ranks without a flow sit the step out."""
    n_ranks = len({r for f in flows for r in f})

    def rows(outs):
        out = []
        for rank_out in outs:
            for r, rep in enumerate(rank_out or []):
                for i, t in rep:
                    s, d = flows[i]
                    out.append(
                        {
                            "phase": phase,
                            "pattern": pattern,
                            "quantity": "flow",
                            "size_bytes": size,
                            "n_ranks": n_ranks,
                            "n_msgs": n_msgs,
                            "repetition": first + r,
                            "value_s": t,
                            "src": s,
                            "dst": d,
                            "hosts": f"{ctx.hosts[s]},{ctx.hosts[d]}",
                            "extra": {"flow": i} if group is None else {"flow": i, "group": group},
                        }
                    )
        return out

    def replay(stored):
        by_rep: dict[int, list[tuple[int, float]]] = {}
        for r in stored:
            by_rep.setdefault(r["repetition"], []).append((r["extra"]["flow"], r["value_s"]))
        return [[by_rep[i] for i in sorted(by_rep)]]

    return ctx.step(
        key,
        "zhu.flows",
        {"flows": flows, "size": size, "reps": reps},
        rows=rows,
        replay=replay,
    )


def ci_ok(values: list[float], rel: float) -> bool:
    """Zhu's rule: the 95% confidence interval of the mean is within rel of the mean."""
    n = len(values)
    if n < 2:
        return False
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    half = 1.96 * math.sqrt(var / n)
    return mean > 0 and 2 * half <= rel * mean


def procedure(opts: dict[str, Any]):
    def run(ctx: Context) -> dict[str, Any]:
        x, y, distinct = sides(ctx.hosts)
        exps = plan(x, y, opts["max_k"])
        if not exps:
            raise CommodelError("measure concurrent needs at least 2 ranks")
        ctx.progress.grow(len(exps) * 2)
        size = int(opts["size"])
        results = []
        with ctx.phase("concurrent"):
            for pattern, k, flows in exps:
                per_flow: dict[int, list[float]] = {i: [] for i in range(len(flows))}
                batch = 0
                while True:
                    reps = int(opts["min_reps"]) if batch == 0 else 1
                    key = f"concurrent/{pattern}/k={k}/b={batch}"
                    first = len(per_flow[0])

                    res = flows_step(
                        ctx, key, "concurrent", pattern, size, flows, reps, first, n_msgs=k
                    )
                    for rank_out in res.per_rank:
                        for rep in rank_out or []:
                            for i, t in rep:
                                per_flow[i].append(t)
                    batch += 1
                    n = len(per_flow[0])
                    if n >= int(opts["max_reps"]) or all(
                        ci_ok(v, float(opts["ci"])) for v in per_flow.values()
                    ):
                        break
                ctx.progress.advance(2, f"concurrent {pattern} k={k}")
                bw = [size / (sum(v) / len(v)) for _, v in sorted(per_flow.items())]
                results.append({"pattern": pattern, "k": k, "flows": flows, "bandwidth": bw})
        return {
            "campaign": ctx.campaign,
            "distinct_hosts": distinct,
            "x": x,
            "y": y,
            "results": results,
            "verdict": verdict(results),
        }

    return run


def verdict(results: list[dict[str, Any]], tol: float = 0.2) -> dict[str, Any]:
    """Fairness: in every ``uni`` experiment the per-flow bandwidths are within ``tol`` of
    their mean. Asymmetric property: in ``in-k-out-1`` with k >= 2 the lone outgoing flow
    gets about the bandwidth of one incoming flow (ratio below (1 + k)/2), not the full
    duplex capacity (ratio near k)."""
    fair = None
    for r in results:
        if r["pattern"] == "uni" and r["k"] >= 2:
            mean = sum(r["bandwidth"]) / len(r["bandwidth"])
            ok = all(abs(b - mean) <= tol * mean for b in r["bandwidth"])
            fair = ok if fair is None else fair and ok
    asym = None
    ratios = {}
    for r in results:
        if r["pattern"] == "in-k-out-1" and r["k"] >= 2:
            k = r["k"]
            incoming = r["bandwidth"][:k]
            out_bw = r["bandwidth"][k]
            ratio = out_bw / (sum(incoming) / k)
            ratios[k] = ratio
            holds = ratio < (1 + k) / 2
            asym = holds if asym is None else asym and holds
    return {"fairness": fair, "asymmetric": asym, "out_in_ratio": ratios}


MEASUREMENT = Measurement(
    name="concurrent",
    help="k concurrent flows through one node: fairness, asymmetric property (Zhu 5)",
    description="Zhu et al. section 5: k flows from node X to node Y (one way), and k "
    "flows in with 1 or k out (both ways); reports whether bandwidth is shared fairly "
    "and whether the asymmetric property holds. Ranks are grouped into nodes by host.",
    options=Options,
    validate=validate_options,
    procedure=procedure,
    summary=format_concurrent_result,
)
