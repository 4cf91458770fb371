"""``measure plogp``: Kielmann's fast PLogP measurement (Kielmann, Bal, Verstoep 2000, sec. 3).

Rank 0 is *measure*, rank 1 is *mirror*; other ranks stay idle. Phases (timed, Table 2):

``g0``         g(0) by saturation: n = 10 empty messages in a row and one empty reply, n
               doubled until the gap per message changes by less than eps and
               RTT_1 < eps * RTT_n.
``roundtrip``  for every size m: roundtrip 1 (send m, receive 0) gives RTT(m) and o_s(m);
               roundtrip 2 (send 0, wait Delta > RTT(m), receive m) gives o_r(m).
               Sizes 0 and 2^k, k = 0..k_m; k_m grows until g(2^k_m) agrees with the
               extrapolation from the two smaller sizes; intervals are halved where a size
               disagrees with that extrapolation, down to max(32 B, eps*m). Repetitions are
               added in growing batches (5, 5, 10, 20, ...) until the average error is
               under eps, up to 60 (small messages) / 15 (large ones). With ``--budget``
               no interval is halved once the phase has taken that long (the halving goes
               from the small sizes up, so on a slow link it keeps the eager limit's step
               and drops the large sizes' refinements, each a few seconds). With ``--sizes``
               exactly the sizes given (and 0), no extension or halving.
``saturation`` (``--method saturation``) g(m) by saturation for every size, for comparison.
``bidirectional`` (``--bidirectional``) g(0) and RTT(m) with both ranks sending and
               receiving at once (PlogPT III-B.1), giving the bidirectional g(m).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

from ..errors import CommodelError
from ..stats import (
    STATISTICS,
    central,
    relative_standard_error,
    saturation_gap,
    standard_error,
)
from .common import Context, kernel, seconds
from .unit import Measurement, fill, option

MODES = ("send", "isend", "ssend")
TAG_SYNC, TAG_DATA, TAG_REPLY = 11, 12, 13
MEASURE, MIRROR = 0, 1


@dataclass(frozen=True)
class Options:
    """``measure plogp``'s options (the campaign's options in the results database)."""

    mode: str = option("send", "send call timed (send)", choices=MODES)
    method: str = option(
        "fast",
        "fast: g(m) from roundtrips (default); saturation: also g(m) by saturating the "
        "link for every size",
        choices=("fast", "saturation"),
    )
    bidirectional: bool = option(False, "also measure bidirectional g(m)", kind="flag")
    eps: float = option(0.01, "relative error bound eps (0.01)", kind="float")
    max_size: int = option(1 << 24, "largest message size (16MiB)", kind="size")
    k_m: int = option(18, "initial sizes 2^0..2^k_m (18)", kind="int")
    sizes: list[int] | None = option(
        None,
        "measure exactly these sizes, comma-separated (and 0), instead of Kielmann's "
        "adaptive ones: e.g. to compare --method saturation at a few sizes",
        kind="sizes",
    )
    reps_batch: int = option(5)
    max_reps_small: int = option(
        60, "repetition cap for small messages (60)", kind="int", flag="--max-reps"
    )
    max_reps_large: int = option(15, "repetition cap for large messages (15)", kind="int")
    large_size: int = option(1 << 16)
    sat_reps: int = option(3)
    sat_start: int = option(10)
    sat_max_n: int = option(
        1 << 14,
        "saturation: at most this many messages in a row (16384), and at most 64 MiB",
        kind="int",
    )
    sat_max_bytes: int = option(1 << 26)
    statistic: str = option(
        "median",
        "central value of repetitions (median; Kielmann uses the mean)",
        choices=STATISTICS,
    )
    # intervals are not halved below this share of m (None: eps, Kielmann's)
    halving: float | None = option(None)
    # sizes measured both ways: "all", or "powers" (0, the powers of two and the largest)
    bidirectional_sizes: str = option("all")
    budget: float = option(
        0.0,
        "seconds: once the roundtrip phase has taken this long, no more intervals are "
        "halved (0: no budget)",
        kind="float",
    )


# --- Kielmann's stopping rules (the procedure adapts to what it measured) -------------------


def saturation_done(
    rtt_1: float, prev: tuple[int, float] | None, cur: tuple[int, float], eps: float
) -> bool:
    """Kielmann's stopping rule for doubling n: the gap per message RTT_n/n changed by less
    than eps since the previous n, and RTT_1 < eps * RTT_n."""
    if prev is None:
        return False
    n0, rtt0 = prev
    n1, rtt1 = cur
    gap0, gap1 = rtt0 / n0, rtt1 / n1
    if gap1 <= 0:
        return False
    return abs(gap1 - gap0) / gap1 < eps and rtt_1 < eps * rtt1


def extrapolate(m0: float, v0: float, m1: float, v1: float, m: float) -> float:
    """The value at m on the line through (m0, v0) and (m1, v1)."""
    if m1 == m0:
        return v1
    return v1 + (v1 - v0) * (m - m1) / (m1 - m0)


def agrees(
    m0: float,
    v0: float,
    se0: float,
    m1: float,
    v1: float,
    se1: float,
    m2: float,
    v2: float,
    se2: float,
    eps: float,
) -> bool:
    """Whether v2 at m2 agrees with the extrapolation from (m0, v0) and (m1, v1): the
    difference is within eps relative, or within two standard errors of the difference (the
    paper assumes measurements precise to eps; on a shared machine noise alone would
    otherwise trigger halving everywhere)."""
    pred = extrapolate(m0, v0, m1, v1, m2)
    diff = abs(v2 - pred)
    if diff <= eps * max(abs(pred), abs(v2)):
        return True
    r = (m2 - m1) / (m1 - m0) if m1 != m0 else 0.0
    noise = math.sqrt(se2**2 + ((1 + r) * se1) ** 2 + (r * se0) ** 2)
    return math.isfinite(noise) and diff <= 2.0 * noise


def halving_limit(m: int, eps: float) -> float:
    """Intervals are not halved below max(32 bytes, eps * m)."""
    return max(32.0, eps * m)


# --- kernels (run on every rank) ------------------------------------------------------------


def _sender(ctx: Context, mode: str):
    comm, MPI = ctx.comm, ctx.MPI
    if mode == "send":
        return lambda buf, m, dst: comm.Send([buf, m, MPI.BYTE], dst, TAG_DATA)
    if mode == "ssend":
        return lambda buf, m, dst: comm.Ssend([buf, m, MPI.BYTE], dst, TAG_DATA)
    if mode == "isend":
        return lambda buf, m, dst: comm.Isend([buf, m, MPI.BYTE], dst, TAG_DATA).Wait()
    raise CommodelError(f"unknown send mode {mode!r} (send, isend, ssend)")


def _prepare(ctx: Context, params: dict) -> dict:
    params = dict(params)
    m = int(params["m"])
    if m < 0:
        raise CommodelError(f"message size must be >= 0, got {m}")
    if ctx.rank in (MEASURE, MIRROR):
        params["buf"] = ctx.buffer(m, "send")
        params["rbuf"] = ctx.buffer(m, "recv")
        params["send"] = _sender(ctx, params.get("mode", "send"))
    return params


def _sits_out(ctx: Context, state: Any = None) -> bool:
    """The ranks that take no part in PLogP's kernels: all but MEASURE and MIRROR."""
    return ctx.rank not in (MEASURE, MIRROR)


@kernel("plogp.saturation", _prepare, _sits_out)
def _k_saturation(ctx: Context, p: dict) -> Any:
    """n messages of m bytes in a row, then one empty reply; returns RTT_n per repetition.
    Ranks other than MEASURE and MIRROR sit it out (:func:`_sits_out`)."""
    comm, MPI = ctx.comm, ctx.MPI
    m, n, reps = int(p["m"]), int(p["n"]), int(p["reps"])
    buf, rbuf, send = p["buf"], p["rbuf"], p["send"]
    empty = ctx.buffer(0, "empty")
    peer = MIRROR if ctx.rank == MEASURE else MEASURE
    wtime = MPI.Wtime
    out = []
    for _ in range(reps):
        if p.get("bidirectional"):
            # both ends send n messages and receive n at once, then exchange empty replies
            if ctx.rank == MEASURE:
                comm.Recv([empty, 0, MPI.BYTE], peer, TAG_SYNC)
            else:
                comm.Send([empty, 0, MPI.BYTE], peer, TAG_SYNC)
            t0 = wtime()
            reqs = [comm.Irecv([rbuf, m, MPI.BYTE], peer, TAG_DATA) for _ in range(n)]
            for _ in range(n):
                send(buf, m, peer)
            MPI.Request.Waitall(reqs)
            comm.Sendrecv(
                [empty, 0, MPI.BYTE], peer, TAG_REPLY, [rbuf, 0, MPI.BYTE], peer, TAG_REPLY
            )
            out.append(wtime() - t0)
        elif ctx.rank == MEASURE:
            comm.Recv([empty, 0, MPI.BYTE], MIRROR, TAG_SYNC)
            t0 = wtime()
            for _ in range(n):
                send(buf, m, MIRROR)
            comm.Recv([rbuf, 0, MPI.BYTE], MIRROR, TAG_REPLY)
            out.append(wtime() - t0)
        else:
            comm.Send([empty, 0, MPI.BYTE], MEASURE, TAG_SYNC)
            for _ in range(n):
                comm.Recv([rbuf, m, MPI.BYTE], MEASURE, TAG_DATA)
            comm.Send([empty, 0, MPI.BYTE], MEASURE, TAG_REPLY)
    return out if ctx.rank == MEASURE else None


@kernel("plogp.roundtrip", _prepare, _sits_out)
def _k_roundtrip(ctx: Context, p: dict) -> Any:
    """Kielmann Fig. 1 (right): per repetition (RTT(m), o_s(m), o_r(m)).

    Bidirectional: both ends send m bytes at once and exchange empty replies; per
    repetition (RTT_bi(m), o_s_bi(m)). Ranks other than MEASURE and MIRROR sit it out.
    """
    comm, MPI = ctx.comm, ctx.MPI
    m, reps = int(p["m"]), int(p["reps"])
    buf, rbuf, send = p["buf"], p["rbuf"], p["send"]
    empty = ctx.buffer(0, "empty")
    wtime = MPI.Wtime
    out = []
    if p.get("bidirectional"):
        peer = MIRROR if ctx.rank == MEASURE else MEASURE
        for _ in range(reps):
            if ctx.rank == MEASURE:
                comm.Recv([empty, 0, MPI.BYTE], peer, TAG_SYNC)
            else:
                comm.Send([empty, 0, MPI.BYTE], peer, TAG_SYNC)
            req = comm.Irecv([rbuf, m, MPI.BYTE], peer, TAG_DATA)
            t0 = wtime()
            send(buf, m, peer)
            t1 = wtime()
            req.Wait()
            comm.Sendrecv(
                [empty, 0, MPI.BYTE], peer, TAG_REPLY, [rbuf, 0, MPI.BYTE], peer, TAG_REPLY
            )
            t2 = wtime()
            out.append((t2 - t0, t1 - t0))
        return out if ctx.rank == MEASURE else None
    if ctx.rank == MEASURE:
        for _ in range(reps):
            comm.Recv([empty, 0, MPI.BYTE], MIRROR, TAG_SYNC)
            # roundtrip 1: RTT(m) and o_s(m)
            t0 = wtime()
            send(buf, m, MIRROR)
            t1 = wtime()
            comm.Recv([rbuf, 0, MPI.BYTE], MIRROR, TAG_REPLY)
            t2 = wtime()
            rtt = t2 - t0
            # roundtrip 2: o_r(m), receiving after waiting Delta > RTT(m)
            delta = max(2.0 * rtt, 2e-5)
            t3 = wtime()
            comm.Send([empty, 0, MPI.BYTE], MIRROR, TAG_SYNC)
            while wtime() - t3 < delta:
                pass
            t4 = wtime()
            comm.Recv([rbuf, m, MPI.BYTE], MIRROR, TAG_REPLY)
            t5 = wtime()
            out.append((rtt, t1 - t0, t5 - t4))
        return out
    for _ in range(reps):
        comm.Send([empty, 0, MPI.BYTE], MEASURE, TAG_SYNC)
        comm.Recv([rbuf, m, MPI.BYTE], MEASURE, TAG_DATA)
        comm.Send([empty, 0, MPI.BYTE], MEASURE, TAG_REPLY)
        comm.Recv([rbuf, 0, MPI.BYTE], MEASURE, TAG_SYNC)
        comm.Send([buf, m, MPI.BYTE], MEASURE, TAG_REPLY)
    return None


# --- the procedure (rank 0) -----------------------------------------------------------------


class _Procedure:
    def __init__(self, ctx: Context, opts: dict[str, Any]):
        self.ctx = ctx
        self.o = opts
        self.eps = float(opts["eps"])
        self.statistic = opts["statistic"]
        self.hosts = f"{ctx.hosts[MEASURE]},{ctx.hosts[MIRROR]}"
        # size -> quantity -> values (roundtrip phase), per pattern
        self.rt: dict[str, dict[int, dict[str, list[float]]]] = {"uni": {}, "bi": {}}
        self.g0: dict[str, float] = {}

    # -- saturation --------------------------------------------------------------------------

    def saturation(self, phase: str, pattern: str, m: int) -> float:
        """Double n from sat_start until Kielmann's rule holds; returns g(m) = gap."""
        o = self.o
        bidi = pattern == "bi"
        rtt_1 = central(self._sat_step(phase, pattern, m, 1), self.statistic)
        prev = None
        n = int(o["sat_start"])
        cap_n = min(int(o["sat_max_n"]), max(2, int(o["sat_max_bytes"]) // max(m, 1)))
        cap_n = max(cap_n, 2)
        while True:
            n = min(n, cap_n)
            rtt_n = central(self._sat_step(phase, pattern, m, n, bidi), self.statistic)
            cur = (n, rtt_n)
            if saturation_done(rtt_1, prev, cur, self.eps) or n >= cap_n:
                return saturation_gap(rtt_n, n)
            prev = cur
            n *= 2

    def _sat_step(
        self, phase: str, pattern: str, m: int, n: int, bidi: bool = False
    ) -> list[float]:
        reps = int(self.o["sat_reps"])
        key = f"{phase}/{pattern}/m={m}/n={n}"
        ctx = self.ctx
        res = ctx.step(
            key,
            "plogp.saturation",
            {
                "m": m,
                "n": n,
                "reps": reps,
                "mode": self.o["mode"],
                "bidirectional": pattern == "bi",
            },
            rows=lambda outs: [
                {
                    "phase": phase,
                    "pattern": pattern,
                    "quantity": "rtt_n",
                    "size_bytes": m,
                    "n_ranks": 2,
                    "n_msgs": n,
                    "repetition": i,
                    "value_s": v,
                    "src": MEASURE,
                    "dst": MIRROR,
                    "hosts": self.hosts,
                }
                for i, v in enumerate(outs[MEASURE])
            ],
            replay=lambda rows: [[r["value_s"] for r in rows]],
        )
        ctx.progress.advance(1, f"{phase} {pattern} m={m} n={n}")
        return res.per_rank[0]

    # -- roundtrips --------------------------------------------------------------------------

    def roundtrips(self, pattern: str, m: int) -> dict[str, list[float]]:
        """Roundtrip repetitions for size m, in batches until the average error < eps."""
        o = self.o
        store = self.rt[pattern].setdefault(m, {})
        if store:
            return store
        limit = int(o["max_reps_small"] if m < int(o["large_size"]) else o["max_reps_large"])
        batch = int(o["reps_batch"])
        quantities = ("rtt", "o_s", "o_r") if pattern == "uni" else ("rtt", "o_s")
        b = 0
        while True:
            done = len(store.get("rtt", []))
            # batches grow: 5, 5, 10, 20, ... (each batch as large as all before it), so
            # a size needs few steps and the per-step overhead stays small
            reps = min(max(batch, done), limit - done)
            outs = self._rt_step(pattern, m, b, reps, done, quantities)
            for values in outs:
                for q, v in zip(quantities, values):
                    store.setdefault(q, []).append(v)
            b += 1
            n = len(store["rtt"])
            watched = ("rtt",) if pattern == "bi" else quantities
            if n >= limit or all(relative_standard_error(store[q]) < self.eps for q in watched):
                return store

    def _rt_step(self, pattern, m, b, reps, first, quantities) -> list[tuple]:
        key = f"roundtrip/{pattern}/m={m}/b={b}"

        def rows(outs):
            out = []
            for i, values in enumerate(outs[MEASURE]):
                for q, v in zip(quantities, values):
                    out.append(
                        {
                            "phase": "roundtrip",
                            "pattern": pattern,
                            "quantity": q,
                            "size_bytes": m,
                            "n_ranks": 2,
                            "n_msgs": 1,
                            "repetition": first + i,
                            "value_s": v,
                            "src": MEASURE,
                            "dst": MIRROR,
                            "hosts": self.hosts,
                            "extra": {"mode": self.o["mode"]},
                        }
                    )
            return out

        def replay(stored):
            by_rep: dict[int, dict[str, float]] = {}
            for r in stored:
                by_rep.setdefault(r["repetition"], {})[r["quantity"]] = r["value_s"]
            return [[tuple(by_rep[i][q] for q in quantities) for i in sorted(by_rep)]]

        res = self.ctx.step(
            key,
            "plogp.roundtrip",
            {"m": m, "reps": reps, "mode": self.o["mode"], "bidirectional": pattern == "bi"},
            rows=rows,
            replay=replay,
        )
        self.ctx.progress.advance(1, f"roundtrip {pattern} m={m} reps {first + reps}")
        return res.per_rank[0]

    # -- derived values ----------------------------------------------------------------------

    def value(self, pattern: str, m: int, q: str) -> tuple[float, float]:
        """(central value, standard error) of o_s, o_r or g at size m."""
        st = self.rt[pattern][m]
        if q == "g":
            r0 = self.rt[pattern][0]["rtt"]
            g = central(st["rtt"], self.statistic) - central(r0, self.statistic) + self.g0[pattern]
            se = math.hypot(standard_error(st["rtt"]), standard_error(r0))
            return g, se
        return central(st[q], self.statistic), standard_error(st[q])

    def agrees(self, sizes: list[int], i: int, quantities: tuple[str, ...]) -> bool:
        m0, m1, m2 = sizes[i - 2], sizes[i - 1], sizes[i]
        for q in quantities:
            v0, s0 = self.value("uni", m0, q)
            v1, s1 = self.value("uni", m1, q)
            v2, s2 = self.value("uni", m2, q)
            if not agrees(m0, v0, s0, m1, v1, s1, m2, v2, s2, self.eps):
                return False
        return True

    # -- the whole procedure -------------------------------------------------------------------

    def adapt(self, sizes: list[int], max_size: int, deadline: float) -> None:
        """Kielmann's adaptive sizes, measured as they are added to ``sizes``; no interval
        is halved after ``deadline`` (``time.monotonic()``; infinite: no budget)."""
        ctx = self.ctx
        # extend k_m until g(2^k_m) agrees with the extrapolation from the two below
        while len(sizes) >= 4 and not self.agrees(sizes, len(sizes) - 1, ("g",)):
            nxt = sizes[-1] * 2
            if nxt > max_size:
                break
            ctx.progress.grow(2)
            sizes.append(nxt)
            self.roundtrips("uni", nxt)
        # halve intervals where a size disagrees with the extrapolation
        i = 2
        while i < len(sizes):
            if time.monotonic() > deadline:
                return
            floor = self.o["halving"] if self.o["halving"] is not None else self.eps
            if sizes[i] - sizes[i - 1] <= halving_limit(sizes[i], floor) or self.agrees(
                sizes, i, ("o_s", "o_r", "g")
            ):
                i += 1
                continue
            mid = (sizes[i - 1] + sizes[i]) // 2
            ctx.progress.grow(2)
            sizes.insert(i, mid)
            self.roundtrips("uni", mid)

    def run(self) -> list[int]:
        o, ctx = self.o, self.ctx
        max_size = int(o["max_size"])
        k_m = int(o["k_m"])
        given = o["sizes"]
        if given:
            sizes = [0] + [int(m) for m in given]
        else:
            sizes = [0] + [1 << k for k in range(k_m + 1) if (1 << k) <= max_size]
        ctx.progress.grow(12 + 2 * len(sizes))
        with ctx.phase("g0"):
            self.g0["uni"] = self.saturation("g0", "uni", 0)
        with ctx.phase("roundtrip"):
            budget = float(o["budget"])
            deadline = time.monotonic() + budget if budget > 0 else math.inf
            for m in sizes:
                self.roundtrips("uni", m)
            if not given:
                self.adapt(sizes, max_size, deadline)
        if o["method"] == "saturation":
            ctx.progress.grow(6 * len(sizes))
            with ctx.phase("saturation"):
                for m in sizes[1:]:
                    self.saturation("gsat", "uni", m)
        if o["bidirectional"]:
            ctx.progress.grow(12 + 2 * len(sizes))
            with ctx.phase("bidirectional"):
                self.g0["bi"] = self.saturation("g0", "bi", 0)
                for m in sizes:
                    if o["bidirectional_sizes"] == "all" or m == 0 or not m & (m - 1):
                        self.roundtrips("bi", m)
                if o["bidirectional_sizes"] == "powers" and sizes[-1] & (sizes[-1] - 1):
                    self.roundtrips("bi", sizes[-1])  # the largest, a power of two or not
        return sizes


def validate_options(opts: dict[str, Any]) -> dict[str, Any]:
    """Fill defaults and check every option; errors name the option."""
    out = fill(Options, opts, "measure plogp")
    if out["mode"] not in MODES:
        raise CommodelError(f"--mode must be one of {', '.join(MODES)}, got {out['mode']!r}")
    if out["method"] not in ("fast", "saturation"):
        raise CommodelError(f"--method must be 'fast' or 'saturation', got {out['method']!r}")
    if not 0 < float(out["eps"]) < 1:
        raise CommodelError(f"--eps must be in (0, 1), got {out['eps']}")
    if int(out["max_size"]) < 4:
        raise CommodelError(f"--max-size must be at least 4 bytes, got {out['max_size']}")
    for k in ("max_reps_small", "max_reps_large", "reps_batch", "sat_reps"):
        if int(out[k]) < 2 and k != "sat_reps" or int(out[k]) < 1:
            raise CommodelError(f"--{k.replace('_', '-')} must be at least 2, got {out[k]}")
    if out["sizes"] is not None:
        sizes = out["sizes"]
        if (
            not isinstance(sizes, (list, tuple))
            or not sizes
            or any(isinstance(m, bool) or not isinstance(m, int) or m < 1 for m in sizes)
        ):
            raise CommodelError(f"--sizes must be message sizes of at least 1 byte, got {sizes}")
        out["sizes"] = sorted(set(sizes))
    if not 0 <= int(out["k_m"]) <= 40:
        raise CommodelError(f"--k-m must be in 0..40, got {out['k_m']}")
    if out["statistic"] not in ("mean", "median", "min"):
        raise CommodelError(f"--statistic must be mean, median or min, got {out['statistic']!r}")
    out["eps"] = float(out["eps"])
    out["bidirectional"] = bool(out["bidirectional"])
    if out["halving"] is not None and not 0 < float(out["halving"]) < 1:
        raise CommodelError(f"halving must be in (0, 1), got {out['halving']}")
    out["budget"] = seconds("--budget", out["budget"])
    if out["bidirectional_sizes"] not in ("all", "powers"):
        raise CommodelError(
            f"bidirectional_sizes must be all or powers, got {out['bidirectional_sizes']!r}"
        )
    return out


def procedure(opts: dict[str, Any]):
    def run(ctx: Context) -> dict[str, Any]:
        proc = _Procedure(ctx, opts)
        sizes = proc.run()
        return {
            "campaign": ctx.campaign,
            "sizes": sizes,
            "phase_times": ctx.db.phase_times(ctx.campaign),
            "steps_measured": ctx.steps_measured,
            "steps_replayed": ctx.steps_replayed,
        }

    return run


MEASUREMENT = Measurement(
    name="plogp",
    help="PLogP parameters L, o_s(m), o_r(m), g(m) (Kielmann's fast method)",
    description="Kielmann's fast PLogP measurement between ranks 0 and 1.",
    options=Options,
    validate=validate_options,
    procedure=procedure,
)
