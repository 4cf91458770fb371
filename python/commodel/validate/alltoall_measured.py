"""Alltoall A against B measured on the emulated cluster, with the models' predictions.

:func:`measure_alltoall_ab` measures Alltoall A (``alltoall-xor-pairwise``) and B
(``alltoall-xor-post-all``) per size through ``commodel validate``, predicts them under
plogp, plogpt and maxmin, and writes ``a-alltoall.csv``, a report and plots: which
algorithm each model picks, the errors, and whether the RTOs that appear are predicted.

The cluster demo, :func:`run_cluster_demo` (``commodel validate demo``, ``commodel demo
--cluster``, ``make demo-cluster``), as root: bring up the 8-host two-rack cluster,
calibrate it (plogp up to 256 KiB, tree), measure A and B at 4 KiB, 64 KiB and 256 KiB a
few times, print measured against predicted, and bring the cluster down again. About two
minutes. Without root it says so and exits with code 2 (the prediction-only ``commodel
demo`` needs no root). The full study is ``study/scripts/experiment.py``.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
import warnings
from typing import Any

from ..errors import CommodelError
from ..units import format_duration
from .calibration import Log, calibrate, cluster_up, log_to_stderr, tree_buffers

ALGORITHMS = {"A": "alltoall-xor-pairwise", "B": "alltoall-xor-post-all"}


def size_label(size: int) -> str:
    for unit, factor in (("MiB", 1 << 20), ("KiB", 1024)):
        if size >= factor and size % factor == 0:
            return f"{size // factor}{unit}"
    return f"{size}B"


def measure_alltoall_ab(
    cluster: str,
    platform: str,
    ranks: int,
    sizes: list[int],
    reps: int,
    workdir: str,
    outdir: str,
    models: tuple[str, ...] = ("tcpflow", "plogp", "plogpt", "maxmin"),
    log: Log = log_to_stderr,
) -> list[dict[str, Any]]:
    """Measure and predict Alltoall A and B per size; rows of ``a-alltoall.csv``."""
    from ..schedules import collective, write_goal
    from .matching import picks
    from .runner import validate, write_report

    sdir = os.path.join(workdir, "alltoall")
    os.makedirs(sdir, exist_ok=True)
    db = os.path.join(workdir, "alltoall.duckdb")
    paths: dict[tuple[str, int], str] = {}
    for size in sizes:
        for key, alg in ALGORITHMS.items():
            path = os.path.join(sdir, f"{alg}-{size_label(size)}.goal")
            write_goal(collective(alg, ranks, size), path)
            paths[(key, size)] = path
    order = [paths[(k, s)] for s in sizes for k in ALGORITHMS]
    v = validate(order, platform, list(models), db, cluster=cluster, max_reps=reps, progress=log)
    write_report(v, os.path.join(outdir, "a-alltoall-report"))
    by_path = {r.schedule: r for r in v.results}
    rows = []
    for size in sizes:
        row: dict[str, Any] = {"size_bytes": size}
        measured = {}
        for key in ALGORITHMS:
            r = by_path[paths[(key, size)]]
            measured[key] = r.measured.makespan_s
            row[f"measured_{key}_s"] = r.measured.makespan_s
            row[f"measured_{key}_min_s"] = min(r.measured.makespans)
            row[f"measured_{key}_max_s"] = max(r.measured.makespans)
            row[f"reps_{key}"] = len(r.measured.makespans)
            row[f"rto_reps_{key}"] = r.rto_reps
            row[f"tcp_timeouts_{key}"] = None if r.tcp is None else r.tcp["timeouts"]
        row["measured_pick"] = picks(measured)
        row["measured_gap"] = abs(measured["A"] - measured["B"]) / min(measured.values())
        for model in models:
            pred = {}
            for key in ALGORITHMS:
                o = by_path[paths[(key, size)]].outcomes[model]
                pred[key] = o.makespan_s
                row[f"{model}_{key}_s"] = o.makespan_s
                row[f"{model}_{key}_err"] = (
                    None if o.makespan_s is None else (o.makespan_s - measured[key]) / measured[key]
                )
                row[f"{model}_{key}_rto"] = None if o.error else o.rto_events
            row[f"{model}_pick"] = picks(pred)
        rows.append(row)
    write_rows(os.path.join(outdir, "a-alltoall.csv"), rows)
    try:
        from ..report.validate_plots import series_plot

        for key, alg in ALGORITHMS.items():
            series = {
                f"measured {key} (median)": [
                    (r["size_bytes"], r[f"measured_{key}_s"]) for r in rows
                ]
            }
            for model in models:
                pts = [
                    (r["size_bytes"], r[f"{model}_{key}_s"]) for r in rows if r[f"{model}_{key}_s"]
                ]
                series[model] = pts
            series_plot(
                series, os.path.join(outdir, f"a-alltoall-{key}.png"),
                f"Alltoall {key} ({alg}), {ranks} ranks", "message size [B]", "makespan [s]",
            )  # fmt: skip
    except CommodelError as exc:
        log(f"no plots: {exc}")
    return rows


def write_rows(path: str, rows: list[dict[str, Any]]) -> None:
    keys: list[str] = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        for r in rows:
            w.writerow({k: _cell(r.get(k)) for k in keys})


def _cell(x: Any) -> Any:
    if isinstance(x, float):
        return f"{x:.6g}"
    return "" if x is None else x


# ---------------------------------------------------------------- the cluster demo

DEMO_SIZES = (4096, 65536, 262144)
DEMO_MODELS = ("tcpflow", "plogp", "plogpt", "maxmin")


def default_spec() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    for base in (os.getcwd(), os.path.join(here, "..", "..", "..")):
        path = os.path.join(base, "examples", "clusters", "two-rack-8.yaml")
        if os.path.exists(path):
            return os.path.abspath(path)
    raise CommodelError("cannot find examples/clusters/two-rack-8.yaml; give --spec FILE")


def format_rows(rows: list[dict[str, Any]], models: tuple[str, ...] = DEMO_MODELS) -> str:
    """The demo table: measured A and B per size, each model's prediction, error and pick."""
    head = f"{'size':>8}  {'alg':<3} {'measured':>10} {'TCP RTOs':>8}"
    for m in models:
        head += f"  {m:>16}"
    lines = [head]
    for r in rows:
        for key in ("A", "B"):
            line = (
                f"{r['size_bytes']:>8}  {key:<3} {format_duration(r[f'measured_{key}_s']):>10} "
                f"{'?' if r.get(f'tcp_timeouts_{key}') is None else r[f'tcp_timeouts_{key}']:>8}"
            )
            for m in models:
                t, e = r.get(f"{m}_{key}_s"), r.get(f"{m}_{key}_err")
                cell = "n/a" if t is None else f"{format_duration(t)} {100 * e:+4.0f}%"
                line += f"  {cell:>16}"
            lines.append(line)
        picks = "  ".join(f"{m}: {r.get(f'{m}_pick') or '-'}" for m in models)
        lines.append(f"{'':>8}  faster measured: {r['measured_pick']}   picked by {picks}")
    return "\n".join(lines) + "\n"


def run_cluster_demo(args: argparse.Namespace) -> int:
    """The cluster demo (module documentation); ``args``: ``spec``, ``reps``, ``output``."""
    if os.geteuid() != 0:
        raise CommodelError(
            "the cluster demo needs root (it builds an emulated cluster from network "
            "namespaces); without root, `commodel demo` shows the prediction-only demo"
        )
    spec = getattr(args, "spec", None) or default_spec()
    reps = min(int(getattr(args, "reps", 8) or 8), 8)
    work = tempfile.mkdtemp(prefix="commodel-demo-")
    out = getattr(args, "output", None) or os.path.join(work, "report")
    os.makedirs(out, exist_ok=True)

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    with cluster_up(spec, "cmdemo", log=log) as name, warnings.catch_warnings():
        # the fitted platform's notes (e.g. a bidirectional b clipped to 2 b(1)) are in
        # the report's files; the demo prints only its table
        warnings.simplefilter("ignore", UserWarning)
        platform, _ = calibrate(name, work, max(DEMO_SIZES), log=log, buffer=tree_buffers(spec))
        rows = measure_alltoall_ab(name, platform, 8, list(DEMO_SIZES), reps, work, out, log=log)
    print(f"Alltoall A (xor pairwise) and B (post all receives) on {os.path.basename(spec)}, "
          f"measured with real TCP vs predicted from the fitted platform")  # fmt: skip
    sys.stdout.write(format_rows(rows))
    print(f"report, CSV and plots in {out}")
    return 0
