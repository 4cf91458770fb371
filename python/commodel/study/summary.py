"""The study directory's README.md: its seeds and role, a table per cluster, the targets."""

from __future__ import annotations

import json
import os
from typing import Any

from .report import Scores, score, target_lines

PRIMARY = "tcpflow"


def _load(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, json.JSONDecodeError):
        return None


def calibrate_parts(workdir: str) -> str:
    """How long each part of the calibration took (its campaign's start to its end in
    ``cal.duckdb``), as ``plogp 41 s, topology 6 s, ...``."""
    from ..db import ResultsDB
    from ..errors import CommodelError

    path = os.path.join(workdir, "cal.duckdb")
    if not os.path.exists(path):
        return ""
    try:
        with ResultsDB(path, read_only=True) as db:
            camps = db.campaigns()
    except CommodelError:
        return ""
    return ", ".join(
        f"{c.benchmark} {(c.finished - c.started).total_seconds():.0f} s"
        for c in camps
        if c.finished is not None
    )


def write_summary(outdir: str, record: dict[str, Any]) -> str:
    from .specs import spec_dirs

    role = record["role"]
    lines = [
        f"# Held-out study: seed {record['seed']}, draws "
        f"{', '.join(str(d) for d in record['draws'])} ({role})",
        "",
        f"Measured with commit {', '.join(record.get('commits', ['?']))} from "
        f"{record.get('started', '?')}; "
        f"role **{role}**: "
        + (
            "these clusters may be used to try a model or fit change (development)."
            if role == "dev"
            else "these clusters were drawn after the models were frozen and were used for "
            "nothing but this report (test)."
        ),
        "",
        f"Command: `commodel study run --seed {record['seed']} --first I --count K --role {role} "
        "-o DIR` for the draws above (root; `commodel study score DIR` scores it again "
        "offline).",
        "",
        "| cluster | spec | calibrate | a2a +-10% (tcpflow) | random +-10% | forced +-15% "
        "| order | timeouts tp/fp/fn |",
        "|---|---|---|---|---|---|---|---|",
    ]
    overall: dict[str, Scores] = {}
    calibrations: list[tuple[str, float | None]] = []
    details = []
    for workdir, spec in spec_dirs(outdir, record):
        name = spec["name"]
        measured = _load(os.path.join(workdir, "measured.json")) or {}
        result = _load(os.path.join(workdir, "score.json"))
        cal = (measured.get("elapsed_s") or {}).get("calibrate")
        calibrations.append((name, cal))
        desc = spec["description"].split(": ", 1)[-1]
        if result is None:
            fail = (record.get("failures") or {}).get(name, "not measured")
            lines.append(f"| {name} | {desc} | {fail} | | | | | |")
            continue
        for model in result["models"]:
            overall.setdefault(model, Scores()).merge(score(result, model))
        s = score(result, PRIMARY) if PRIMARY in result["models"] else Scores()
        cal_text = f"{cal:.0f} s" if cal is not None else "?"
        lines.append(
            f"| {name} | {desc} | {cal_text} | {s.alltoall.text()} | {s.random.text()} | "
            f"{s.forced.text()} | {s.order.text()} | {s.tp}/{s.fp}/{s.fn} |"
        )
        details.append(_detail(name, workdir, result, measured))
    lines += ["", "## Targets", ""]
    if PRIMARY in overall:
        lines += [f"`{PRIMARY}` (the default model of a calibrated platform):", ""]
        lines += target_lines(overall[PRIMARY], calibrations)
    others = [m for m in overall if m != PRIMARY]
    if others:
        lines += ["", "The other models, for comparison:", ""]
        lines += [
            "| model | a2a +-10% | random +-10% | forced +-15% | order | timeouts P/R |",
            "|---|---|---|---|---|---|",
        ]
        for m in others:
            s = overall[m]
            lines.append(
                f"| {m} | {s.alltoall.text()} | {s.random.text()} | {s.forced.text()} | "
                f"{s.order.text()} | {s.precision():.2f}/{s.recall():.2f} |"
            )
    lines += ["", "## Per cluster", ""] + [x for d in details for x in d]
    text = "\n".join(lines) + "\n"
    path = os.path.join(outdir, "README.md")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return path


def _detail(name: str, workdir: str, result: dict, measured: dict) -> list[str]:
    out = [f"### {name}", ""]
    parts = calibrate_parts(workdir)
    if parts:
        out.append(f"calibrate's parts: {parts}.")
    if result.get("unavailable"):
        out.append(
            "Unavailable models: "
            + "; ".join(f"{m}: {why}" for m, why in result["unavailable"].items())
            + "."
        )
    # "wire": the key of studies measured before the daemon was named serialize
    late = measured.get("serialize") or measured.get("wire") or {}
    if late:
        out.append(
            f"Serialization daemon lateness: mean {late['late_mean_us']:.0f} us over its ports, "
            f"largest port mean {late['late_max_port_us']:.0f} us."
        )
    models = result["models"]
    out += [
        "",
        "| schedule | measured ms (p10-p90) | " + " | ".join(models) + " | timeouts |",
        "|---|---|" + "---|" * len(models) + "---|",
    ]
    for row in result["schedules"]:
        cells = []
        for m in models:
            p = row["models"].get(m, {})
            if "makespan_s" in p:
                err = (p["makespan_s"] - row["measured_s"]) / row["measured_s"]
                rto = f" ({p['rto']} RTO)" if p.get("rto") else ""
                cells.append(f"{1e3 * p['makespan_s']:.1f} ({err:+.0%}){rto}")
            else:
                cells.append("-")
        out.append(
            f"| {row['file']} | {1e3 * row['measured_s']:.1f} ({1e3 * row['measured_p10_s']:.1f}"
            f"-{1e3 * row['measured_p90_s']:.1f}) | "
            + " | ".join(cells)
            + f" | {row['timeouts']} |"
        )
    if result["forced"]:
        out += [
            "",
            "| collective | alg | size | measured ms | " + " | ".join(models) + " |",
            "|---|---|---|---|" + "---|" * len(models),
        ]
        for row in result["forced"]:
            cells = []
            for m in models:
                p = row["models"].get(m, {})
                if "makespan_s" in p:
                    err = (p["makespan_s"] - row["measured_s"]) / row["measured_s"]
                    cells.append(f"{1e3 * p['makespan_s']:.2f} ({err:+.0%})")
                else:
                    cells.append("-")
            star = "*" if row["default"] else ""
            out.append(
                f"| {row['collective']} | {row['algorithm']}{star} | {row['size']} | "
                f"{1e3 * row['measured_s']:.2f} | " + " | ".join(cells) + " |"
            )
    out.append("")
    return out
