"""``measure pattern SCHEDULE.goal``: run a GOAL schedule for real and time it.

The schedule is parsed by the engine (``commodel._engine``); each rank executes its own
operations with MPI on a private communicator (so GOAL tags cannot meet the harness's):
an operation starts once every operation it ``requires`` has finished and every one it
``irequires`` has started - a send as ``MPI_Isend``, a receive as ``MPI_Irecv`` (source
and tag -1: any), a calc as a busy wait of that many nanoseconds - and the rank waits for
whichever request completes next (``MPI_Testany``), exactly the Isend/Irecv/Wait program
of PlogPT section III-D. Sends read one shared buffer and receives write one shared
buffer (the contents are not used).

Each repetition starts with a barrier; every rank records when each of its operations
started and finished, relative to its own barrier exit, and the makespan is the latest
finish over the ranks. Repetitions continue until the 95% confidence interval of the mean
makespan is within 2% of the mean (Zhu section 3.1) or ``--max-reps``. A schedule that
cannot finish for real (a receive nobody sends) stops after ``--timeout`` seconds with an
error naming the rank and the operations still waiting.

With each makespan the machine's load is stored (``extra`` of the makespan sample, see
:func:`machine_load`): the ranks' CPU time and the longest time a rank waited for a CPU,
the hosts' busy and softirq shares, the load average; so that a run where the machine
rather than the network set the pace can be told apart.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass
from typing import Any

from ..errors import CommodelError
from ..units import format_duration
from .common import Context, kernel, sync_start
from .concurrent import ci_ok
from .unit import Measurement, fill, option


@dataclass(frozen=True)
class Options:
    """``measure pattern``'s options (the campaign's options in the results database)."""

    schedule: str | None = option(
        None,
        "GOAL schedule, one rank per MPI rank",
        kind="path",
        metavar="SCHEDULE.goal",
        positional=True,
    )
    min_reps: int = option(5)
    max_reps: int = option(100, "repetition cap (100)", kind="int")
    ci: float = option(0.02)
    timeout: float = option(60.0, "seconds before a stuck run is an error (60)", kind="float")


def validate_options(opts: dict[str, Any]) -> dict[str, Any]:
    out = fill(Options, opts, "measure pattern")
    if not out["schedule"]:
        raise CommodelError("measure pattern: a GOAL schedule file is required")
    if int(out["max_reps"]) < int(out["min_reps"]):
        raise CommodelError(f"--max-reps must be >= {out['min_reps']}, got {out['max_reps']}")
    if float(out["timeout"]) <= 0:
        raise CommodelError(f"--timeout must be > 0 seconds, got {out['timeout']}")
    return out


_SCHEDULES: dict[str, Any] = {}


def _schedule(ctx: Context, path: str) -> Any:
    """The parsed schedule (cached per file), checked to fit this run's ranks."""
    from ..schedules import read_goal

    sched = _SCHEDULES.get(path)
    if sched is None:
        sched = read_goal(path)
        _SCHEDULES[path] = sched
    if sched.num_ranks != ctx.size:
        raise CommodelError(
            f"{path}: the schedule has {sched.num_ranks} ranks but mpirun started {ctx.size}"
        )
    if not hasattr(sched, "rank_ops"):
        raise CommodelError(
            "this build of the engine bindings has no Schedule.rank_ops(); rebuild them "
            "with 'make install'"
        )
    return sched


def _load(ctx: Context, path: str) -> list[tuple]:
    """This rank's operations."""
    return _schedule(ctx, path).rank_ops(ctx.rank)


def _prepare(ctx: Context, p: dict) -> dict:
    p = dict(p)
    ops = _load(ctx, p["schedule"])
    tag_ub = ctx.comm.Get_attr(ctx.MPI.TAG_UB)
    biggest = 0
    for i, (kind, _peer, tag, size, label, _r, _ir) in enumerate(ops):
        if kind in ("send", "recv"):
            biggest = max(biggest, int(size))
            if tag > tag_ub:
                raise CommodelError(
                    f"{p['schedule']}: rank {ctx.rank} operation {label or '#' + str(i)}: tag "
                    f"{tag} is above this MPI's largest tag {tag_ub}"
                )
    return with_ops(ctx, p, ops, biggest)


def with_ops(ctx: Context, p: dict, ops: list[tuple], biggest: int) -> dict:
    """The state :func:`execute` runs: this rank's operations, send and receive buffers of
    ``biggest`` bytes, and the communicator the schedules run in (a duplicate, kept)."""
    p["ops"] = ops
    p["sbuf"] = ctx.buffer(biggest, "send")
    p["rbuf"] = ctx.buffer(biggest, "recv")
    if "pattern_comm" not in ctx.cache:
        ctx.cache["pattern_comm"] = ctx.comm.Dup()
    p["comm"] = ctx.cache["pattern_comm"]
    return p


def execute(ctx: Context, p: dict) -> list[tuple[float, float]]:
    """One run of this rank's operations; (start, finish) per operation, seconds from t0."""
    MPI, comm, ops = ctx.MPI, p["comm"], p["ops"]
    n = len(ops)
    started = [False] * n
    finished = [False] * n
    times = [(0.0, 0.0)] * n
    waiting_reqs: list[Any] = []
    waiting_ops: list[int] = []
    deadline = time.monotonic() + float(p["timeout"])
    wtime = MPI.Wtime
    sync_start(comm)
    t0 = wtime()
    remaining = n
    while remaining:
        progressed = True
        while progressed:
            progressed = False
            for i in range(n):
                if started[i]:
                    continue
                kind, peer, tag, size, _label, req, ireq = ops[i]
                if not all(finished[j] for j in req) or not all(started[j] for j in ireq):
                    continue
                start = wtime() - t0
                started[i] = True
                progressed = True
                if kind == "calc":
                    end = wtime() + size * 1e-9
                    while wtime() < end:
                        pass
                    finished[i] = True
                    remaining -= 1
                    times[i] = (start, wtime() - t0)
                    continue
                if kind == "send":
                    r = comm.Isend([p["sbuf"], size, MPI.BYTE], peer, tag)
                else:
                    src = MPI.ANY_SOURCE if peer < 0 else peer
                    rtag = MPI.ANY_TAG if tag < 0 else tag
                    r = comm.Irecv([p["rbuf"], size, MPI.BYTE], src, rtag)
                times[i] = (start, 0.0)
                waiting_reqs.append(r)
                waiting_ops.append(i)
        if not remaining:
            break
        if not waiting_reqs:
            raise CommodelError(f"rank {ctx.rank}: no operation can start (a dependency cycle?)")
        while True:
            idx, done = MPI.Request.Testany(waiting_reqs)
            if done and idx != MPI.UNDEFINED:
                break
            if time.monotonic() > deadline:
                stuck = [ops[i][4] or f"#{i}" for i in waiting_ops]
                raise CommodelError(
                    f"rank {ctx.rank}: operations {stuck} did not finish within "
                    f"{p['timeout']} s (the schedule cannot complete for real?)"
                )
        i = waiting_ops.pop(idx)
        waiting_reqs.pop(idx)
        finished[i] = True
        remaining -= 1
        times[i] = (times[i][0], wtime() - t0)
    return times


def host_cpu() -> tuple[int, ...] | None:
    """This host's CPU time counters from /proc/stat (clock ticks): user, nice, system,
    idle, iowait, irq, softirq, steal; None where there is no /proc/stat."""
    try:
        with open("/proc/stat", encoding="ascii") as fh:
            first = fh.readline().split()
    except OSError:
        return None
    return tuple(int(x) for x in first[1:9])


# /proc/stat counts clock ticks (10 ms): shares over fewer ticks than this are noise
MIN_TICKS = 20


def cpu_load(before: tuple[int, ...] | None, after: tuple[int, ...] | None) -> dict[str, float]:
    """The host's CPU use between two :func:`host_cpu` readings: ``busy`` (share of all its
    cores' time not idle), ``softirq`` (share spent in soft interrupts, where the kernel
    moves packets: on the emulated cluster the network itself); empty when the readings are
    too few ticks apart to tell."""
    if before is None or after is None:
        return {}
    d = [a - b for a, b in zip(after, before)]
    total = sum(d)
    if total < MIN_TICKS:
        return {}
    return {"busy": 1.0 - (d[3] + d[4]) / total, "softirq": d[6] / total}


def own_sched() -> tuple[int, int] | None:
    """This process's time on a CPU and time spent runnable but waiting for one (ns), from
    /proc/self/schedstat; None where the kernel does not provide it."""
    try:
        with open("/proc/self/schedstat", encoding="ascii") as fh:
            run, wait = fh.read().split()[:2]
    except (OSError, ValueError):
        return None
    return int(run), int(wait)


@kernel("pattern.run", _prepare)
def _k_run(ctx: Context, p: dict) -> Any:
    """Per repetition: the operations' times, the host's CPU use over the repetition and
    this rank's own CPU time in it (s): whether the machine, not the network, was the
    bottleneck (busy-polling ranks on fewer cores, packets waiting for a CPU)."""
    out = []
    for _ in range(int(p["reps"])):
        before, sched = host_cpu(), own_sched()
        times = execute(ctx, p)
        after = own_sched()
        run_wait = (
            None
            if sched is None or after is None
            else ((after[0] - sched[0]) * 1e-9, (after[1] - sched[1]) * 1e-9)
        )
        out.append((times, cpu_load(before, host_cpu()), run_wait))
    return out


def machine_load(per_rank: list[tuple], hosts: list[str]) -> dict[str, float]:
    """One repetition's machine figures from every rank's (times, host cpu, (run, wait)):
    the ranks' time on a CPU summed (``ranks_cpu_s``), the longest any rank was runnable but
    waited for a CPU (``rank_wait_max_s``: a rank that waits while its message is due is
    late because of the machine, not the network), the largest busy and softirq shares over
    the hosts when the repetition was long enough to tell, the 1-minute load average of rank
    0's host."""
    out: dict[str, float] = {}
    sched = [r[2] for r in per_rank if r[2] is not None]
    if sched:
        out["ranks_cpu_s"] = float(sum(run for run, _ in sched))
        out["rank_wait_max_s"] = float(max(wait for _, wait in sched))
    loads = [r[1] for r in per_rank if r[1]]
    if loads:
        out["host_busy"] = max(x["busy"] for x in loads)
        out["host_softirq"] = max(x["softirq"] for x in loads)
    with contextlib.suppress(OSError):
        out["load1"] = os.getloadavg()[0]
    out["hosts"] = float(len(set(hosts)))
    return out


def procedure(opts: dict[str, Any]):
    def run(ctx: Context) -> dict[str, Any]:
        path = opts["schedule"]
        sched = _schedule(ctx, path)  # parse errors are reported here, once, by rank 0
        ops_by_rank = [sched.rank_ops(r) for r in range(sched.num_ranks)]
        makespans: list[float] = []
        batch = 0
        ctx.progress.grow(int(opts["max_reps"]))
        with ctx.phase("pattern"):
            while True:
                reps = int(opts["min_reps"]) if batch == 0 else max(1, len(makespans) // 2)
                reps = min(reps, int(opts["max_reps"]) - len(makespans))
                first = len(makespans)

                def rows(outs, first=first):
                    out = []
                    for rep in range(len(outs[0])):
                        span = max(
                            max((t[1] for t in outs[r][rep][0]), default=0.0)
                            for r in range(ctx.size)
                        )
                        out.append(
                            {
                                "phase": "pattern",
                                "pattern": os.path.basename(path),
                                "quantity": "makespan",
                                "n_ranks": ctx.size,
                                "repetition": first + rep,
                                "value_s": span,
                                "extra": machine_load(
                                    [outs[r][rep] for r in range(ctx.size)], ctx.hosts
                                ),
                            }
                        )
                        for r in range(ctx.size):
                            for i, (start, end) in enumerate(outs[r][rep][0]):
                                kind, peer, tag, size, label, _q, _iq = ops_by_rank[r][i]
                                out.append(
                                    {
                                        "phase": "pattern",
                                        "pattern": os.path.basename(path),
                                        "quantity": f"{kind}_end",
                                        "size_bytes": size if kind != "calc" else 0,
                                        "n_ranks": ctx.size,
                                        "repetition": first + rep,
                                        "value_s": end,
                                        "src": r if kind == "send" else peer,
                                        "dst": peer if kind == "send" else r,
                                        "hosts": ctx.hosts[r],
                                        "extra": {
                                            "rank": r,
                                            "op": i,
                                            "label": label,
                                            "tag": tag,
                                            "start_s": start,
                                        },
                                    }
                                )
                    return out

                res = ctx.step(
                    f"pattern/b={batch}",
                    "pattern.run",
                    {"schedule": path, "reps": reps, "timeout": float(opts["timeout"])},
                    rows=rows,
                    replay=lambda stored: ["replayed", stored],
                )
                if res.replayed:
                    makespans += [
                        r["value_s"] for r in res.per_rank[1] if r["quantity"] == "makespan"
                    ]
                else:
                    for rep in range(reps):
                        makespans.append(
                            max(
                                max((t[1] for t in res.per_rank[r][rep][0]), default=0.0)
                                for r in range(ctx.size)
                            )
                        )
                ctx.progress.advance(
                    reps, f"pattern {os.path.basename(path)} reps {len(makespans)}"
                )
                batch += 1
                if len(makespans) >= int(opts["max_reps"]) or (
                    len(makespans) >= int(opts["min_reps"]) and ci_ok(makespans, float(opts["ci"]))
                ):
                    break
        mean = sum(makespans) / len(makespans)
        return {
            "campaign": ctx.campaign,
            "schedule": path,
            "reps": len(makespans),
            "makespan_mean_s": mean,
            "makespan_min_s": min(makespans),
            "makespan_max_s": max(makespans),
            "converged": ci_ok(makespans, float(opts["ci"])),
        }

    return run


def summary(result: dict[str, Any]) -> str:
    """What ``measure pattern`` prints: the makespan's mean, min and max."""
    return (
        f"campaign {result['campaign']}: {result['schedule']}: makespan mean "
        f"{format_duration(result['makespan_mean_s'])} (min "
        f"{format_duration(result['makespan_min_s'])}, max "
        f"{format_duration(result['makespan_max_s'])}) over {result['reps']} runs"
        + ("" if result["converged"] else "; the 95% interval is still wider than 2%")
    )


MEASUREMENT = Measurement(
    name="pattern",
    help="run a GOAL schedule for real (Isend/Irecv/Wait) and time it",
    description="Every rank executes its part of a GOAL schedule with MPI_Isend, "
    "MPI_Irecv and waits in dependency order; repeated until the 95% confidence "
    "interval of the makespan is within 2% of its mean (or --max-reps).",
    options=Options,
    validate=validate_options,
    procedure=procedure,
    summary=summary,
)
