"""``tcp.model_error`` from a ``check`` campaign: how far ``tcpflow`` strays on this cluster.

Once every other section is fitted (the ``through_model`` stage, after the fan-in), each
schedule the campaign ran (:data:`commodel.measure.check.CHECKS`) is predicted with the
platform under ``tcpflow`` and compared with its measured median makespan. The model error
σ_m is a robust scale of the log ratios r_s = ln(measured_s / predicted_s) over the
schedules s: σ_m = 1.4826 · median_s |r_s| (the normal's σ from its median absolute value,
about 0: bias and scatter together; a model that is 20% fast everywhere has σ_m = 1.4826 ·
ln 1.25 = 0.33). :mod:`commodel.spread` widens a prediction's 80% interval by it.

Why the median and not the root mean square: with four schedules one outlier decided the
root mean square. On held-out clusters of 10-12 hosts the allreduce ring at 16 KiB ran
2.6-3.9 times its prediction while the other three checks were within 5-16%; σ_m came out
0.53-0.69 and the 80% intervals then held 96-100% of those clusters' measured medians.
Decided on the held-out study's dev draws (19 with a check part; docs/validation.md, *The
held-out study*, its sixth round): the intervals held 85% of the medians with the root mean
square, 79% with the median (68% with the root mean square of all but the largest ratio).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from typing import Any

from ..errors import CommodelError


def medians(samples: list[dict[str, Any]]) -> dict[tuple[str, int], tuple[float, int]]:
    """(schedule, size) -> (median makespan s, ranks) of the campaign's ``check`` samples."""
    by: dict[tuple[str, int], list[float]] = defaultdict(list)
    ranks: dict[tuple[str, int], int] = {}
    for r in samples:
        if r.get("phase") == "check" and r.get("quantity") == "makespan":
            key = (str(r["pattern"]), int(r["size_bytes"]))
            by[key].append(float(r["value_s"]))
            ranks[key] = int(r["n_ranks"])
    return {k: (statistics.median(v), ranks[k]) for k, v in sorted(by.items())}


MAD_TO_SIGMA = 1.4826  # 1 / Φ⁻¹(3/4): a normal's σ over the median of its absolute value


def model_error(ratios: list[float]) -> float:
    """σ_m = 1.4826 · median(|r|) of the log ratios r = ln(measured / predicted)."""
    if not ratios:
        raise CommodelError("no check schedule to take the model's error from")
    return MAD_TO_SIGMA * statistics.median(abs(r) for r in ratios)


def error_section(doc: dict[str, Any], samples: list[dict[str, Any]]) -> tuple[float, str]:
    """σ_m and the comment (per schedule: measured, predicted, ratio) for the platform
    document ``doc`` (every section but this one)."""
    from ..platform import platform_from_dict
    from ..prediction import predict
    from ..schedules import collective

    platform = platform_from_dict(doc)
    lines, ratios = [], []
    for (name, size), (measured, ranks) in medians(samples).items():
        if ranks != platform.nodes:
            raise CommodelError(
                f"check schedule {name} ran on {ranks} ranks, the platform has "
                f"{platform.nodes} nodes"
            )
        predicted = predict(
            collective(name, ranks, size), platform, "tcpflow", record_messages=False
        ).makespan_s
        if not (measured > 0 and predicted > 0):
            raise CommodelError(f"check schedule {name} {size} B: a makespan of 0")
        ratios.append(math.log(measured / predicted))
        lines.append(
            f"  {name} {size} B: measured {measured * 1e3:.3f} ms, predicted "
            f"{predicted * 1e3:.3f} ms ({measured / predicted - 1:+.0%})"
        )
    sigma = model_error(ratios)
    note = (
        f"model_error {sigma:.3f}: 1.4826 x the median of |ln(measured / predicted)| over "
        f"{len(ratios)} collectives run by the check part (tcpflow):\n" + "\n".join(lines)
    )
    return sigma, note


def through_model(sections: dict[str, Any], comments: dict[str, str], db, camp) -> None:
    """``tcp.model_error`` from the campaign, where the platform can run ``tcpflow`` (it
    has ``plogp``, ``network`` and ``tcp.efficiency``); else a comment why not."""
    from .efficiency import model_doc, tcpflow_lacks

    samples = db.samples(camp.id)
    if not medians(samples):
        return  # the part measured nothing (several ranks per host)
    lacking = tcpflow_lacks(sections)
    if lacking:
        comments["tcp"] = (
            comments.get("tcp", "")
            + f"\nmodel_error not fitted: tcpflow needs the {lacking} section"
        )
        return
    sigma, note = error_section(model_doc(sections), samples)
    sections["tcp"]["model_error"] = round(sigma, 4)
    comments["tcp"] = comments.get("tcp", "") + "\n" + note


def summary(result: dict[str, Any], db) -> str:
    """What ``measure check`` prints: each schedule's median makespan (``commodel fit`` of a
    database with the other parts predicts them and writes ``tcp.model_error``)."""
    if result.get("note"):
        return f"campaign {result['campaign']}: check {result['note']}"
    lines = [f"campaign {result['campaign']}: check (median makespans)"]
    for (name, size), (median, ranks) in medians(db.samples(result["campaign"])).items():
        lines.append(f"  {name} {size} B on {ranks} ranks: {median * 1e3:.3f} ms")
    return "\n".join(lines)
