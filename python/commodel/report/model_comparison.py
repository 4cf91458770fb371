"""``commodel predict --model all``: one schedule under every model, side by side.

Every registered model whose platform sections are present is run; the others are
listed with the reason (the section they need). The table's columns: makespan, slowest
rank (and its finish time), RTO events and the ratio of each makespan to the fastest one;
:func:`comparison_dict` is the JSON object of ``--model all --json``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from ..errors import CommodelError
from ..units import duration_unit, format_duration
from .tables import format_table

if TYPE_CHECKING:
    from ..platform import Platform
    from ..prediction import Prediction


@dataclass(frozen=True)
class ModelRun:
    """One model's outcome, or why it could not run on the platform."""

    model: str
    prediction: Prediction | None
    skipped: str = ""


def missing_sections(platform: Platform, model: str) -> str:
    """Why ``platform`` cannot run ``model`` (the sections it lacks), or ``""`` if it can."""
    from ..platform.engine_params import lacking

    missing = lacking(platform, model)
    return f"no `{'`, `'.join(missing)}` section" if missing else ""


def _run_model(schedule: object, platform: Platform, record_messages: bool, name: str) -> ModelRun:
    """``schedule`` under model ``name``, or the sections it misses; module-level, so that an
    MPI worker can be sent it (:mod:`commodel.parallel`; ``schedule`` is then a path)."""
    from ..prediction import predict

    skipped = missing_sections(platform, name)
    if skipped:
        return ModelRun(name, None, skipped)
    return ModelRun(name, predict(schedule, platform, model=name, record_messages=record_messages))


def compare_models(
    schedule: object,
    platform: Platform,
    models: list[str] | None = None,
    record_messages: bool = True,
    jobs: int | None = None,
) -> list[ModelRun]:
    """Run ``schedule`` under ``models`` (default: every registered model), up to ``jobs``
    models at once (:func:`commodel.parallel.map_ordered`; the runs come in model order)."""
    from ..parallel import map_ordered
    from ..platform import model_names

    task = partial(_run_model, schedule, platform, record_messages)
    runs = map_ordered(task, models if models is not None else model_names(), jobs)
    if not any(r.prediction for r in runs):
        raise CommodelError(
            f"platform {platform.name} has the sections of none of the models "
            f"({', '.join(r.model for r in runs)})"
        )
    return runs


def comparison_table(runs: list[ModelRun]) -> str:
    """The side-by-side table of :func:`compare_models`."""
    done = [r.prediction for r in runs if r.prediction is not None]
    best = min(p.makespan_s for p in done)
    unit, _ = duration_unit(max(p.makespan_s for p in done))
    rows = []
    for r in runs:
        p = r.prediction
        if p is None:
            rows.append([r.model, "-", "-", "-", "-", r.skipped])
            continue
        slow = p.slowest_rank
        ratio = p.makespan_s / best if best > 0 else 1.0
        rows.append(
            [
                r.model,
                format_duration(p.makespan_s, unit),
                f"{slow.rank} ({format_duration(slow.finish_s, unit)})",
                str(len(p.rto_events)),
                f"{ratio:.3f}",
                "",
            ]
        )
    return (
        format_table(
            ["model", "makespan", "slowest rank", "RTOs", "x fastest", "note"],
            rows,
            align="lrrrrl",
        )
        + "\n"
    )


def comparison_dict(runs: list[ModelRun], platform: str) -> dict[str, Any]:
    """The JSON object of ``predict --model all --json`` (docs/prediction.schema.json):
    ``model`` is ``"all"``, ``predictions`` maps each model that ran to its prediction
    object (the object of a single ``predict --json``), ``skipped`` each other model to
    the reason."""
    return {
        "model": "all",
        "platform": platform,
        "predictions": {r.model: r.prediction.to_dict() for r in runs if r.prediction},
        "skipped": {r.model: r.skipped for r in runs if r.prediction is None},
    }
