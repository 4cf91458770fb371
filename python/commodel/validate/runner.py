"""``commodel validate``: measure schedules for real, predict them under every model, compare.

The measurement is ``commodel measure pattern`` run through ``commodel cluster mpirun`` (when a
cluster name is given) into a results database; the comparison reads the database, so a
validation can also be re-run later on stored measurements without a cluster.
"""

from __future__ import annotations

import csv
import math
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable

from ..errors import CommodelError
from ..stats import TOLERANCE, ErrorSummary, median, summarize
from .matching import MessagePair, PredictedMessage, match_messages, rto_repetitions
from .pattern_results import MeasuredPattern, load_pattern

# The models of "--models all", in the order reports list them.
ALL_MODELS = (
    "hockney",
    "loggops",
    "plogp",
    "plogpt",
    "maxmin",
    "maxmin-plain",
    "zhu",
    "zhu-fair",
)

_SIZE_TOKEN = re.compile(r"-(\d+)(B|KiB|MiB|GiB)(?=$|-)")
_UNITS = {"B": 1, "KiB": 1024, "MiB": 1 << 20, "GiB": 1 << 30}


def schedule_family(path: str) -> tuple[str, int | None]:
    """``(family, size)`` from a file name like ``alltoall-xor-pairwise-64KiB.goal``."""
    stem = os.path.basename(path)
    if stem.endswith(".goal"):
        stem = stem[: -len(".goal")]
    m = _SIZE_TOKEN.search(stem)
    if not m:
        return stem, None
    size = int(m.group(1)) * _UNITS[m.group(2)]
    return stem[: m.start()] + stem[m.end() :], size


def resolve_models(text: str) -> list[str]:
    """``all`` or a comma-separated list of model names (checked against the registry)."""
    from ..platform import MODELS, model_spec

    if text.strip() == "all":
        return [m for m in ALL_MODELS if m in MODELS] + sorted(set(MODELS) - set(ALL_MODELS))
    names = [x.strip() for x in text.split(",") if x.strip()]
    if not names:
        raise CommodelError("--models: give `all` or a comma-separated list of models")
    return [model_spec(n).name for n in names]


def tcp_timeouts(cluster: str) -> dict[str, int]:
    """Per emulated host: TcpExtTCPTimeouts and TcpRetransSegs (sums) from /proc/net/netstat
    and /proc/net/snmp inside the host's namespace (counters since the cluster came up)."""
    from ..cluster.state import read_state

    state = read_state(cluster)
    if state is None:
        raise CommodelError(f"no cluster {cluster} is up (commodel cluster status)")
    total = {"timeouts": 0, "retrans_segs": 0}
    for host in state["hosts"]:
        for fname, prefix, key, out in (
            ("/proc/net/netstat", "TcpExt:", "TCPTimeouts", "timeouts"),
            ("/proc/net/snmp", "Tcp:", "RetransSegs", "retrans_segs"),
        ):
            proc = subprocess.run(
                ["ip", "netns", "exec", host["ns"], "cat", fname],
                capture_output=True,
                text=True,
            )
            lines = [x.split() for x in proc.stdout.splitlines() if x.startswith(prefix)]
            if len(lines) >= 2 and key in lines[0]:
                total[out] += int(lines[1][lines[0].index(key)])
    return total


def run_pattern(
    cluster: str,
    schedule: str,
    db: str,
    max_reps: int,
    ranks_per_host: int = 1,
    timeout: float = 120.0,
    python: str = sys.executable,
    quiet: bool = True,
) -> dict[str, int]:
    """Run ``measure pattern SCHEDULE`` on the emulated cluster ``cluster``.

    Returns the TCP retransmission timeouts and retransmitted segments the hosts counted
    during the run (every repetition and the launcher's own traffic on the data network,
    which is tiny: Open MPI's launch goes over the management network).
    """
    before = tcp_timeouts(cluster)
    cmd = [python, "-m", "commodel", "cluster", "mpirun", "--name", cluster]
    if ranks_per_host != 1:
        cmd += ["-k", str(ranks_per_host)]
    cmd += ["--", python, "-m", "commodel", "measure", "pattern", os.path.abspath(schedule)]
    cmd += ["--db", os.path.abspath(db), "--quiet", "--max-reps", str(max_reps)]
    cmd += ["--timeout", str(timeout)]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if not quiet or proc.returncode:
        sys.stderr.write(proc.stdout)
    if proc.returncode:
        raise CommodelError(
            f"{schedule}: measure pattern on cluster {cluster} failed with exit code "
            f"{proc.returncode} (output above)"
        )
    after = tcp_timeouts(cluster)
    return {k: after[k] - before[k] for k in after}


@dataclass
class ModelOutcome:
    """One schedule under one model."""

    model: str
    makespan_s: float | None = None
    messages: list[MessagePair] = field(default_factory=list)
    rto_events: int = 0
    error: str | None = None  # why the model could not predict it
    predicted: list[PredictedMessage] = field(default_factory=list, repr=False)
    low_s: float | None = None  # the makespan's 80% interval (commodel.spread), if any
    high_s: float | None = None


@dataclass
class ScheduleResult:
    schedule: str
    family: str
    size: int | None
    measured: MeasuredPattern
    rto_reps: int
    outcomes: dict[str, ModelOutcome] = field(default_factory=dict)
    tcp: dict[str, int] | None = None  # TCP timeouts / retransmitted segments during the run


def predict_under(schedule: str, platform: Any, model: str) -> ModelOutcome:
    """Predict one schedule; a model that cannot run here is recorded, not raised."""
    from ..prediction import predict
    from ..spread import spread

    try:
        pred = predict(schedule, platform, model)
        interval = spread(schedule, platform, model, prediction=pred)
    except CommodelError as exc:
        return ModelOutcome(model, error=str(exc))
    msgs = [
        PredictedMessage(m.src, m.dst, m.tag, m.bytes, m.end_s, m.start_s, m.rto)
        for m in pred.messages
    ]
    return ModelOutcome(
        model,
        makespan_s=pred.makespan_s,
        rto_events=len(pred.rto_events),
        predicted=msgs,
        low_s=None if interval is None else interval.low_s,
        high_s=None if interval is None else interval.high_s,
    )


def predict_and_match(
    schedule: str, measured: MeasuredPattern, platform: Any, model: str
) -> ModelOutcome:
    """:func:`predict_under`, with the predicted messages matched to the measured ones."""
    out = predict_under(schedule, platform, model)
    if out.error is None:
        out.messages = match_messages(measured.messages, out.predicted)
    return out


def _predict_item(platform: Any, item: tuple[str, MeasuredPattern, str]) -> ModelOutcome:
    """:func:`predict_and_match` of one (schedule, measured, model); module-level, so that
    an MPI worker can be sent it (:mod:`commodel.parallel`)."""
    schedule, measured, model = item
    return predict_and_match(schedule, measured, platform, model)


def compare_schedule(
    schedule: str,
    measured: MeasuredPattern,
    outcomes: list[ModelOutcome],
    rto_min_s: float,
) -> ScheduleResult:
    """One schedule's result from its measurement and its outcome under each model."""
    family, size = schedule_family(schedule)
    if size is None and measured.messages:
        size = max(m.bytes for m in measured.messages)
    return ScheduleResult(
        schedule=schedule,
        family=family,
        size=size,
        measured=measured,
        rto_reps=rto_repetitions(measured.makespans, rto_min_s),
        outcomes={o.model: o for o in outcomes},
    )


@dataclass
class Validation:
    """Schedules compared under models. With ``machine_wait`` set, the accuracy figures
    (``summary``, ``errors``) leave out the machine-bound schedules (in the median repetition
    a rank waited for a CPU longer than that share of the makespan, see
    MeasuredPattern.machine_bound); :meth:`machine_bound` lists them, reported apart. Off by
    default: ranks that busy-poll on fewer cores wait for a CPU whether or not their messages
    are late (81-104% of the makespan for 8 ranks on 2 cores, at 4 KiB and 256 KiB alike),
    so the wait share alone does not tell (the summary shows it)."""

    results: list[ScheduleResult]
    models: list[str]
    tolerance: float = TOLERANCE
    machine_wait: float | None = None

    def machine_bound(self) -> list[ScheduleResult]:
        if self.machine_wait is None:
            return []
        return [r for r in self.results if r.measured.machine_bound(self.machine_wait)]

    def _counted(self) -> list[ScheduleResult]:
        bound = {id(r) for r in self.machine_bound()}
        return [r for r in self.results if id(r) not in bound]

    def unavailable(self) -> dict[str, str]:
        """Models that could not predict some schedule, with the first reason."""
        out: dict[str, str] = {}
        for r in self.results:
            for m, o in r.outcomes.items():
                if o.error is not None and m not in out:
                    out[m] = o.error
        return out

    def summary(self, model: str, scope: str) -> ErrorSummary:
        pairs: list[tuple[float, float]] = []
        for r in self._counted():
            o = r.outcomes.get(model)
            if o is None or o.error is not None:
                continue
            if scope == "messages":
                pairs += [(p.predicted_s, p.measured_s) for p in o.messages]
            else:
                pairs.append((o.makespan_s, r.measured.makespan_s))
        return summarize(pairs, self.tolerance)

    def coverage(self, model: str) -> tuple[int, int]:
        """(schedules whose measured median makespan lies in the model's 80% interval,
        schedules with an interval)."""
        inside = total = 0
        for r in self._counted():
            o = r.outcomes.get(model)
            if o is None or o.low_s is None or o.high_s is None:
                continue
            total += 1
            inside += o.low_s <= r.measured.makespan_s <= o.high_s
        return inside, total

    def errors(self, model: str, scope: str) -> list[float]:
        out: list[float] = []
        for r in self._counted():
            o = r.outcomes.get(model)
            if o is None or o.error is not None:
                continue
            if scope == "messages":
                out += [p.error for p in o.messages]
            else:
                out.append((o.makespan_s - r.measured.makespan_s) / r.measured.makespan_s)
        return out


def validate(
    schedules: list[str],
    platform_path: str,
    models: list[str],
    db: str,
    cluster: str | None = None,
    max_reps: int = 20,
    ranks_per_host: int = 1,
    tolerance: float = TOLERANCE,
    timeout: float = 120.0,
    progress: Callable[[str], None] | None = None,
    machine_wait: float | None = None,
    jobs: int | None = None,
) -> Validation:
    """Measure (if ``cluster``) every schedule, one after the other; then predict each under
    every model, up to ``jobs`` predictions at once (:func:`commodel.parallel.map_ordered`),
    and compare."""
    from ..parallel import map_ordered
    from ..platform import load_platform

    platform = load_platform(platform_path)
    tcp = platform.sections.get("tcp")
    rto_min_s = float(getattr(tcp, "rto", 0.2) or 0.2)
    runs = []  # measured one after the other, before any prediction uses the cores
    for i, sched in enumerate(schedules):
        if not os.path.exists(sched):
            raise CommodelError(f"{sched}: no such schedule file")
        counters = None
        if cluster is not None:
            if progress:
                progress(f"[{i + 1}/{len(schedules)}] measuring {sched} on cluster {cluster}")
            counters = run_pattern(cluster, sched, db, max_reps, ranks_per_host, timeout)
        runs.append((sched, load_pattern(db, sched), counters))
    todo = [(sched, measured, model) for sched, measured, _ in runs for model in models]
    outcomes = map_ordered(partial(_predict_item, platform), todo, jobs)
    results = []
    for k, (sched, measured, counters) in enumerate(runs):
        mine = outcomes[k * len(models) : (k + 1) * len(models)]
        res = compare_schedule(sched, measured, mine, rto_min_s)
        res.tcp = counters
        results.append(res)
    return Validation(results, models, tolerance, machine_wait)


# ---------------------------------------------------------------- output


def _fmt(x: float | None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    return f"{x:.6g}"


def write_csvs(v: Validation, outdir: str) -> list[str]:
    os.makedirs(outdir, exist_ok=True)
    bound = v.machine_bound()
    paths = []
    p = os.path.join(outdir, "makespans.csv")
    with open(p, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(
            [
                "schedule", "family", "size_bytes", "campaign", "reps", "measured_median_s",
                "measured_min_s", "measured_max_s", "measured_rto_reps", "tcp_timeouts",
                "tcp_retrans_segs", "rank_wait_share_median", "machine_bound", "model",
                "predicted_s", "predicted_rto_events", "rel_error", "error",
            ]
        )  # fmt: skip
        for r in v.results:
            m = r.measured
            for model in v.models:
                o = r.outcomes[model]
                err = None if o.error else (o.makespan_s - m.makespan_s) / m.makespan_s
                w.writerow(
                    [
                        os.path.basename(r.schedule), r.family, r.size or "", m.campaign,
                        len(m.makespans), _fmt(m.makespan_s), _fmt(min(m.makespans)),
                        _fmt(max(m.makespans)), r.rto_reps,
                        "" if r.tcp is None else r.tcp["timeouts"],
                        "" if r.tcp is None else r.tcp["retrans_segs"],
                        _fmt(median(m.wait_shares())) if m.wait_shares() else "",
                        int(r in bound), model, _fmt(o.makespan_s),
                        "" if o.error else o.rto_events, _fmt(err), o.error or "",
                    ]
                )  # fmt: skip
    paths.append(p)
    p = os.path.join(outdir, "messages.csv")
    with open(p, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(
            ["schedule", "model", "src", "dst", "tag", "bytes", "measured_s", "predicted_s",
             "rel_error", "predicted_rto"]
        )  # fmt: skip
        for r in v.results:
            for model in v.models:
                for pair in r.outcomes[model].messages:
                    w.writerow(
                        [os.path.basename(r.schedule), model, pair.src, pair.dst, pair.tag,
                         pair.bytes, _fmt(pair.measured_s), _fmt(pair.predicted_s),
                         _fmt(pair.error), int(pair.rto)]
                    )  # fmt: skip
    paths.append(p)
    p = os.path.join(outdir, "summary.csv")
    with open(p, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(
            ["model", "scope", "count", "within", "fraction_within", "mean_abs_error",
             "mean_error", "worst_error", "tolerance"]
        )  # fmt: skip
        for model in v.models:
            for scope in ("makespans", "messages"):
                s = v.summary(model, scope)
                w.writerow(
                    [model, scope, s.count, s.within, _fmt(s.fraction_within),
                     _fmt(s.mean_abs_error), _fmt(s.mean_error), _fmt(s.worst_error),
                     s.tolerance]
                )  # fmt: skip
    paths.append(p)
    return paths


def summary_text(v: Validation) -> str:
    tol = round(v.tolerance * 100)
    bound = v.machine_bound()
    apart = f" ({len(bound)} machine-bound, reported apart below)" if bound else ""
    lines = [
        f"{len(v.results)} schedule(s){apart}; within +-{tol}%: fraction of makespans and "
        "of messages",
        "",
        f"{'model':<13} {'makespans':>10} {'mean |err|':>10} {'worst':>8}   "
        f"{'messages':>10} {'mean |err|':>10} {'worst':>8}",
    ]
    gone = v.unavailable()
    for model in v.models:
        a, b = v.summary(model, "makespans"), v.summary(model, "messages")
        if a.count == 0:
            lines.append(f"{model:<13} unavailable: {gone.get(model, 'no prediction')}")
            continue

        def pct(x: float) -> str:
            return "" if math.isnan(x) else f"{100 * x:.0f}%"

        def spct(x: float) -> str:
            return "" if math.isnan(x) else f"{100 * x:+.0f}%"

        lines.append(
            f"{model:<13} {f'{a.within}/{a.count}':>6} {pct(a.fraction_within):>4} "
            f"{pct(a.mean_abs_error):>9} {spct(a.worst_error):>8}   "
            f"{f'{b.within}/{b.count}':>6} {pct(b.fraction_within):>4} "
            f"{pct(b.mean_abs_error):>9} {spct(b.worst_error):>8}"
        )
        counted = len(v.results) - len(bound)
        if a.count < counted:
            lines.append(f"{'':<13} (predicted {a.count} of {counted}: {gone.get(model)})")
    covered = [(m, *v.coverage(m)) for m in v.models if v.coverage(m)[1]]
    if covered:
        lines.append("")
        lines.append(
            "80% intervals (tcp.spread's per-message noise, tcp.model_error) holding the "
            "measured median: "
            + ", ".join(f"{m} {i}/{n} ({100 * i / n:.0f}%)" for m, i, n in covered)
        )
    shares = [median(r.measured.wait_shares()) for r in v.results if r.measured.wait_shares()]
    if shares and not bound:
        lines.append("")
        lines.append(
            f"ranks waited for a CPU: {100 * median(shares):.0f}% of the makespan in the median "
            f"schedule (from {100 * min(shares):.0f}% to {100 * max(shares):.0f}%); "
            "--machine-wait SHARE reports schedules above SHARE apart"
        )
    if bound:
        lines.append("")
        lines.append(
            f"machine-bound, not in the figures above: in the median repetition a rank waited "
            f"for a CPU longer than {100 * (v.machine_wait or 0):.0f}% of the makespan (more "
            "ranks than cores, or the emulated network's packets competing with the ranks)"
        )
        for r in bound:
            errs = ", ".join(
                f"{m} {100 * (o.makespan_s - r.measured.makespan_s) / r.measured.makespan_s:+.0f}%"
                for m, o in r.outcomes.items()
                if o.error is None and o.makespan_s is not None
            )
            lines.append(
                f"  {os.path.basename(r.schedule)}: waited {100 * median(r.measured.wait_shares()):.0f}%"
                f" of the makespan; errors {errs or 'none'}"
            )
    rto = [
        r
        for r in v.results
        if r.rto_reps
        or (r.tcp and r.tcp["timeouts"])
        or any(o.error is None and o.rto_events for o in r.outcomes.values())
    ]
    if rto:
        lines.append("")
        lines.append(
            "retransmission timeouts: slow repetitions (>= 0.8 RTO_min above the fastest), "
            "TCP timeouts the hosts counted during the run, models predicting one"
        )
        for r in rto:
            pred = [m for m, o in r.outcomes.items() if o.error is None and o.rto_events]
            count = "" if r.tcp is None else f"; {r.tcp['timeouts']} TCP timeouts"
            lines.append(
                f"  {os.path.basename(r.schedule)}: {r.rto_reps}/{len(r.measured.makespans)} "
                f"slow{count}; predicted by: {', '.join(pred) or 'none'}"
            )
    return "\n".join(lines) + "\n"


def write_report(v: Validation, outdir: str, plots: bool = True) -> list[str]:
    paths = write_csvs(v, outdir)
    p = os.path.join(outdir, "summary.txt")
    with open(p, "w", encoding="utf-8") as fh:
        fh.write(summary_text(v))
    paths.append(p)
    if plots:
        from ..report.validate_plots import error_histograms, predicted_vs_measured

        for scope in ("makespans", "messages"):
            q = os.path.join(outdir, f"error-histogram-{scope}.png")
            error_histograms({m: v.errors(m, scope) for m in v.models}, q, scope, v.tolerance)
            paths.append(q)
        q = os.path.join(outdir, "predicted-vs-measured.png")
        if predicted_vs_measured(v, q):
            paths.append(q)
    return paths
