"""The held-out study (``commodel study``): random clusters, calibrated and judged.

For each spec drawn from a seed (:mod:`.specs`): bring the emulated cluster up, run
``commodel calibrate`` on it as a user would, measure a fixed workload (:mod:`.workload`),
bring it down (:mod:`.runner`); then score the models' predictions against the measured
medians (:mod:`.score`) and write the report of the targets (:mod:`.report`). The study
directory records its seed and its role: ``dev`` seeds may be used to try a model or fit
change, ``test`` seeds only to report on a frozen one.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import subprocess
from typing import Any, Callable

from ..errors import CommodelError
from .specs import spec_dirs

ROLES = ("dev", "test")


def _commit() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        out = subprocess.run(
            ["git", "-C", here, "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    except OSError:
        out = ""
    return out or "unknown"


def study_record(outdir: str) -> dict[str, Any]:
    path = os.path.join(outdir, "study.json")
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError:
        raise CommodelError(f"{outdir}: no study here (no study.json)") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise CommodelError(f"{path}: cannot read the study record: {exc}") from None


def run_study(
    outdir: str,
    seed: int,
    count: int,
    role: str,
    first: int = 0,
    log: Callable[[str], None] = print,
    measure_only: bool = False,
    work: str = "full",
) -> dict[str, Any]:
    """Measure (resuming where a killed run stopped), score and report every draw;
    ``work`` names the workload (:data:`commodel.study.workload.WORKLOADS`)."""
    from ..cluster.control import Interrupted
    from .runner import measure_spec
    from .workload import WORKLOADS

    if work not in WORKLOADS:
        raise CommodelError(f"--workload must be one of {', '.join(WORKLOADS)}, got {work!r}")
    if role not in ROLES:
        raise CommodelError(f"--role must be one of {', '.join(ROLES)}, got {role!r}")
    if count < 1 or first < 0 or not 0 <= seed < 2**63:
        raise CommodelError("--count must be >= 1, --first >= 0, --seed in 0 .. 2**63 - 1")
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, "study.json")
    if os.path.exists(path):
        record = study_record(outdir)
        if (record.get("seed"), record.get("role"), record.get("workload", "full")) != (
            seed,
            role,
            work,
        ):
            raise CommodelError(
                f"{outdir} holds the {record.get('role')} study of seed {record.get('seed')} "
                f"({record.get('workload', 'full')} workload); choose another directory"
            )
    else:
        record = {
            "seed": seed,
            "role": role,
            "workload": work,
            "draws": [],
            "started": _now(),
            "commits": [],
        }
    record["draws"] = sorted(set(record["draws"]) | set(range(first, first + count)))
    if _commit() not in record["commits"]:
        record["commits"].append(_commit())
    _write(path, record)
    failures = dict(record.get("failures", {}))
    for workdir, spec in spec_dirs(outdir, record):
        if int(spec["name"].split("x")[-1]) not in range(first, first + count):
            continue
        log(f"== {spec['name']}: {spec['description']}")
        try:
            measure_spec(spec, workdir, log, work=WORKLOADS[work])
            failures.pop(spec["name"], None)
        except Interrupted:
            raise  # SIGTERM, Ctrl-C: the cluster is down, the study stops here
        except CommodelError as exc:
            failures[spec["name"]] = str(exc).splitlines()[0]
            log(f"{spec['name']}: failed: {failures[spec['name']]}")
        record["failures"] = failures
        _write(path, record)
    if not measure_only:
        score_study(outdir, log=log)
    return record


def score_study(outdir: str, refit: bool = False, log: Callable[[str], None] = print) -> str:
    """Score every measured draw of the study again and rewrite its README.md."""
    from .score import score_spec
    from .summary import write_summary
    from .workload import WORKLOADS

    record = study_record(outdir)
    work = WORKLOADS[record.get("workload", "full")]
    for workdir, spec in spec_dirs(outdir, record):
        if os.path.exists(os.path.join(workdir, "measured.json")):
            try:
                score_spec(workdir, refit=refit, work=work)
            except CommodelError as exc:
                log(f"{spec['name']}: not scored: {str(exc).splitlines()[0]}")
    return write_summary(outdir, record)


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _write(path: str, record: dict[str, Any]) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(record, fh, indent=1, sort_keys=True)
        fh.write("\n")
    os.replace(tmp, path)
