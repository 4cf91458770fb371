"""Score one measured cluster of the study: predictions against the measured medians.

Reads only what :mod:`commodel.study.runner` wrote (no cluster), so a model or fit change
can be scored again on the same measurements (``commodel study score DIR --refit``). The
platform is the one ``calibrate`` wrote, or with ``refit`` the one ``commodel fit`` fits
again from ``cal.duckdb`` with the current code. Nothing here reads ``spec.yaml``: the
report shows the spec beside the scores, the models never see it.

The result (``score.json``) has, per model:

* ``schedules``: per GOAL file of the workload, the measured median makespan (and the 10th
  and 90th percentiles of the repetitions), the predicted makespan and its interval, the
  timeouts the hosts counted and the ones the model predicts;
* ``forced``: per collective, algorithm and size, the measured median of the forced Open MPI
  runs and the predicted time of the algorithm's generator.
"""

from __future__ import annotations

import json
import os
import statistics
from typing import Any

from ..errors import CommodelError
from . import workload

MODELS = ("tcpflow", "plogp", "maxmin", "plogpt")


def _quantile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    if len(s) == 1:
        return s[0]
    pos = q * (len(s) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def platform_path(workdir: str, refit: bool) -> str:
    """The platform to score with: calibrate's, or fitted again into ``refit.yaml``."""
    if not refit:
        return os.path.join(workdir, "platform.yaml")
    from ..fit.assemble import fit_to_text

    out = os.path.join(workdir, "refit.yaml")
    text = fit_to_text(os.path.join(workdir, "cal.duckdb"), None, None, None)
    with open(out, "w", encoding="utf-8") as fh:
        fh.write(text)
    return out


INTERVAL_MODELS = ("tcpflow",)  # the models whose 80% interval the report scores


def _predict(sched: Any, plat: Any, model: str) -> dict[str, Any]:
    from ..prediction import predict
    from ..spread import spread

    try:
        pred = predict(sched, plat, model=model, record_messages=False)
        sp = spread(sched, plat, model, prediction=pred) if model in INTERVAL_MODELS else None
    except CommodelError as exc:
        return {"error": str(exc).splitlines()[0]}
    out = {"makespan_s": pred.makespan_s, "rto": len(pred.rto_events)}
    if sp is not None:
        out.update(low_s=sp.low_s, high_s=sp.high_s)
    return out


def score_schedules(
    workdir: str, plat: Any, models: tuple[str, ...], work: workload.Workload
) -> list[dict[str, Any]]:
    from ..schedules import read_goal
    from ..validate.pattern_results import load_pattern

    db = os.path.join(workdir, "pattern.duckdb")
    with open(os.path.join(workdir, "counters.json"), encoding="utf-8") as fh:
        counters = json.load(fh)
    out = []
    for s in workload.write_schedules(plat.nodes, os.path.join(workdir, "schedules"), work):
        key = os.path.basename(s.path)
        if key not in counters:
            continue
        measured = load_pattern(db, s.path)
        spans = list(measured.makespans)
        sched = read_goal(s.path)
        row: dict[str, Any] = {
            "part": s.part,
            "label": s.label,
            "file": key,
            "size": s.size,
            "measured_s": statistics.median(spans),
            "measured_p10_s": _quantile(spans, 0.1),
            "measured_p90_s": _quantile(spans, 0.9),
            "reps": len(spans),
            "timeouts": int(counters[key].get("timeouts", 0)),
            "wait_share": statistics.median(measured.wait_shares() or [0.0]),
            "models": {m: _predict(sched, plat, m) for m in models},
        }
        out.append(row)
    return out


def forced_campaigns(db_path: str) -> dict[tuple[str, int], int]:
    """The last complete ``measure collective`` campaign of each (collective, algorithm)."""
    from ..db import ResultsDB

    out: dict[tuple[str, int], int] = {}
    with ResultsDB(db_path, read_only=True) as db:
        for c in db.campaigns():
            if c.benchmark == "collective" and c.status == "complete":
                opts = c.options
                if int(opts.get("splits", 1) or 1) == 1 and not opts.get("rules_file"):
                    out[(str(opts["collective"]), int(opts["algorithm"]))] = c.id
    return out


def score_forced(
    workdir: str, plat: Any, models: tuple[str, ...], work: workload.Workload
) -> list[dict[str, Any]]:
    from ..advise.advice import advise
    from ..measure.collective import campaign_samples
    from ..openmpi import default_algorithm

    db = os.path.join(workdir, "forced.duckdb")
    if not os.path.exists(db):
        return []
    camps = forced_campaigns(db)
    ranks = plat.nodes
    out = []
    for coll in work.forced_collectives:
        predicted = {
            m: advise(plat, coll, [ranks], list(work.forced_sizes), model=m, jobs=1) for m in models
        }
        for (c, alg), cid in sorted(camps.items()):
            if c != coll or alg == 0:
                continue
            samples = campaign_samples(db, cid)
            for size in work.forced_sizes:
                xs = samples.get(size)
                if not xs:
                    continue
                row: dict[str, Any] = {
                    "collective": coll,
                    "algorithm": alg,
                    "size": size,
                    "measured_s": statistics.median(xs),
                    "measured_p10_s": _quantile(xs, 0.1),
                    "measured_p90_s": _quantile(xs, 0.9),
                    "reps": len(xs),
                    "default": default_algorithm(coll, ranks, size) == alg,
                    "models": {},
                }
                for m, adv in predicted.items():
                    [pt] = [p for p in adv.points if p.size == size]
                    cand = [x for x in pt.candidates if x.number == alg]
                    if cand and cand[0].time_s is not None:
                        row["models"][m] = {"makespan_s": cand[0].time_s, "rto": cand[0].timeouts}
                        if m in INTERVAL_MODELS:
                            row["models"][m].update(
                                _forced_interval(plat, m, coll, alg, cand[0].generator, size)
                            )
                    else:
                        note = cand[0].note if cand else "no generator"
                        row["models"][m] = {"error": note or "no prediction"}
                out.append(row)
    return out


def _forced_interval(plat: Any, model: str, coll: str, alg: int, gen: str, size: int) -> dict:
    """The 80% interval of a forced algorithm's schedule as the advice predicts it."""
    from ..advise.advice import candidate_schedule
    from ..spread import spread

    sched = candidate_schedule(coll, alg, gen, plat.nodes, size)
    sp = spread(sched, plat, model)
    return {} if sp is None else {"low_s": sp.low_s, "high_s": sp.high_s}


def score_spec(
    workdir: str,
    refit: bool = False,
    models: tuple[str, ...] = MODELS,
    work: workload.Workload = workload.FULL,
) -> dict:
    """Score the measured cluster in ``workdir``; writes and returns ``score.json``."""
    from ..platform import load_platform

    path = platform_path(workdir, refit)
    plat = load_platform(path)
    have = [m for m in models if _available(plat, m)]
    result = {
        "platform": os.path.basename(path),
        "models": have,
        "unavailable": {m: _why(plat, m) for m in models if m not in have},
        "schedules": score_schedules(workdir, plat, tuple(have), work),
        "forced": score_forced(workdir, plat, tuple(have), work),
    }
    with open(os.path.join(workdir, "score.json"), "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1)
    return result


def _why(plat: Any, model: str) -> str | None:
    from ..platform import model_spec

    try:
        plat.engine_params(model_spec(model).name)
    except CommodelError as exc:
        return str(exc).splitlines()[0]
    return None


def _available(plat: Any, model: str) -> bool:
    return _why(plat, model) is None
