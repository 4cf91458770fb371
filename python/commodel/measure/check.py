"""``measure check``: a few collectives run for real, for the model's error on this cluster.

``calibrate`` ends with this part. Each of :data:`CHECKS` (Open MPI algorithms at sizes of
small, middle and large messages: a pairwise alltoall of 8 KiB, a linear alltoall of
64 KiB, a binomial bcast of 128 KiB, a ring allreduce of 16 KiB) is generated for the run's
ranks and executed as ``measure pattern`` executes a GOAL schedule (:func:`.pattern.execute`:
Isend/Irecv as the schedule orders them), once untimed, then ``min_reps`` times, then up to
``max_reps`` while the repetitions have taken less than ``budget`` seconds. A repetition's
makespan is the latest finish over the ranks.

The fit (:mod:`commodel.fit.check`) predicts the same schedules with the fitted platform
(``tcpflow``) and writes 1.4826 times the median of |log(measured median / predicted)| as
``tcp.model_error``: how far the model itself strays on this cluster, which widens every
prediction's interval (:mod:`commodel.spread`). One rank per host (or every rank on one
host, as ``efficiency`` counts nodes): where hosts carry several ranks the part measures
nothing (the platform's nodes are hosts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import CommodelError
from .common import Context, kernel
from .efficiency import node_ranks
from .pattern import execute, with_ops
from .unit import Measurement, fill, option

KiB = 1024

# (collective generator, bytes as `commodel schedule` counts them)
CHECKS: tuple[tuple[str, int], ...] = (
    ("alltoall-pairwise", 8 * KiB),
    ("alltoall-basic-linear", 64 * KiB),
    ("bcast-binomial", 128 * KiB),
    ("allreduce-ring", 16 * KiB),
)


@dataclass(frozen=True)
class Options:
    """``measure check``'s options (the campaign's options in the results database)."""

    min_reps: int = option(3, "repetitions of every schedule (3)", kind="int")
    max_reps: int = option(5, "repetition cap (5)", kind="int")
    budget: float = option(
        3.0, "seconds: no repetition past --min-reps once a schedule's took this long (3)",
        kind="float",
    )  # fmt: skip
    timeout: float = option(60.0, "seconds before a stuck run is an error (60)", kind="float")


def validate_options(opts: dict[str, Any]) -> dict[str, Any]:
    out = fill(Options, opts, "measure check")
    if int(out["min_reps"]) < 1:
        raise CommodelError(f"--min-reps must be >= 1, got {out['min_reps']}")
    if int(out["max_reps"]) < int(out["min_reps"]):
        raise CommodelError(f"--max-reps must be >= {out['min_reps']}, got {out['max_reps']}")
    for name in ("budget", "timeout"):
        value = float(out[name])
        if not 0.0 <= value < float("inf") or (name == "timeout" and value == 0.0):
            raise CommodelError(f"--{name} must be a finite number of seconds > 0, got {value}")
        out[name] = value
    return out


def _prepare(ctx: Context, p: dict) -> dict:
    from ..schedules import collective

    ops = collective(p["name"], ctx.size, int(p["size"])).rank_ops(ctx.rank)
    biggest = max((int(op[3]) for op in ops if op[0] in ("send", "recv")), default=0)
    return with_ops(ctx, dict(p), ops, biggest)


@kernel("check.run", _prepare)
def _k_run(ctx: Context, p: dict) -> list[float]:
    """Per repetition, this rank's last finish (s after its start barrier); with ``warmup``
    one untimed run first (the first messages between two ranks open their connections)."""
    if p.get("warmup"):
        execute(ctx, p)
    return [max((end for _, end in execute(ctx, p)), default=0.0) for _ in range(int(p["reps"]))]


def _run_schedule(ctx: Context, opts: dict[str, Any], name: str, size: int) -> None:
    spans: list[float] = []
    batch = 0
    while len(spans) < int(opts["max_reps"]):
        reps = int(opts["min_reps"]) if batch == 0 else 1
        if batch and sum(spans) >= float(opts["budget"]):
            break
        first = len(spans)

        def rows(outs, first=first):
            per_rep = [max(r[i] for r in outs) for i in range(len(outs[0]))]
            return [
                {"phase": "check", "pattern": name, "quantity": "makespan", "size_bytes": size,
                 "n_ranks": ctx.size, "repetition": first + i, "value_s": v}
                for i, v in enumerate(per_rep)
            ]  # fmt: skip

        def replay(stored):
            ordered = sorted(stored, key=lambda r: r["repetition"])
            return [[r["value_s"] for r in ordered]]

        res = ctx.step(
            f"check/{name}/m={size}/b={batch}",
            "check.run",
            {
                "name": name,
                "size": size,
                "reps": reps,
                "timeout": opts["timeout"],
                "warmup": batch == 0,
            },  # fmt: skip
            rows=rows,
            replay=replay,
        )
        spans += [max(r[i] for r in res.per_rank if r) for i in range(reps)]
        batch += 1


def procedure(opts: dict[str, Any]):
    def run(ctx: Context) -> dict[str, Any]:
        if len(node_ranks(ctx.hosts)) != ctx.size:
            note = "measured nothing: the check needs one rank per host"
            return {"campaign": ctx.campaign, "note": note}
        ctx.progress.grow(len(CHECKS))
        with ctx.phase("check"):
            for name, size in CHECKS:
                _run_schedule(ctx, opts, name, size)
                ctx.progress.advance(1, f"check {name} {size} B")
        return {"campaign": ctx.campaign, "schedules": len(CHECKS)}

    return run


MEASUREMENT = Measurement(
    name="check",
    help="a few collectives run for real, that fit predicts: the model's error (>= 2 hosts)",
    description="Runs four Open MPI collective algorithms (alltoall pairwise 8 KiB and "
    "linear 64 KiB, bcast binomial 128 KiB, allreduce ring 16 KiB) as GOAL schedules; "
    "fit predicts them with the fitted platform and writes tcp.model_error, which widens "
    "every prediction's 80% interval.",
    options=Options,
    validate=validate_options,
    procedure=procedure,
    min_ranks=2,
)
