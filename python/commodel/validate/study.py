"""The validation study of ``make experiment`` (scripts/experiment.py) and of the cluster demo.

Every number written comes from a run made by these functions: the cluster is brought up
from a spec, calibrated (``measure plogp`` + ``measure tree`` + ``fit``), the experiments
run through ``cluster mpirun``, and the cluster is brought down on every path.

Parts (issue 5, item 3):

* (a) :func:`part_alltoall`: Alltoall A (``alltoall-xor-pairwise``) and B
  (``alltoall-xor-post-all``) per size, measured against plogp, plogpt and maxmin: which
  algorithm each picks, the errors, and whether the RTOs that appear are predicted;
* (b) :func:`part_many_to_one`: ``measure many-to-one`` with n - 1 = 3..P-1 senders, the
  escalation levels and frequencies of one half of the repetitions against the model fitted
  on the other half (and the plogpt prediction of the linear gather);
* (c) :func:`part_random`: random-pairs schedules of degree d: fraction within 10% for
  zhu, zhu-fair, maxmin and plogpt.
"""

from __future__ import annotations

import csv
import datetime as _dt
import json
import os
import platform as _platform
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Callable

from ..errors import CommodelError

PY = sys.executable

Log = Callable[[str], None]


def _log_default(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def commodel(*args: str, log: Log = _log_default, check: bool = True) -> str:
    """Run ``python -m commodel ARGS``; return its standard output (raise on failure)."""
    cmd = [PY, "-m", "commodel", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if check and proc.returncode:
        log(proc.stdout[-3000:])
        log(proc.stderr[-3000:])
        raise CommodelError(f"`commodel {' '.join(args)}` failed with exit code {proc.returncode}")
    return proc.stdout


def mpirun(cluster: str, *args: str, log: Log = _log_default) -> str:
    """``cluster mpirun --name CLUSTER -- python -m commodel ARGS``."""
    return commodel(
        "cluster", "mpirun", "--name", cluster, "--", PY, "-m", "commodel", *args, log=log
    )


@contextmanager
def cluster_up(spec: str, name: str, log: Log = _log_default) -> Iterator[str]:
    """Bring a cluster up and always down again (also on errors and Ctrl-C)."""
    if os.geteuid() != 0:
        raise CommodelError("the emulated cluster needs root (see docs/cluster.md)")
    try:
        log(commodel("cluster", "up", "--spec", spec, "--name", name, log=log).strip())
        yield name
    finally:
        out = commodel("cluster", "down", "--name", name, log=log, check=False)
        log(out.strip())


def machine_description() -> dict[str, Any]:
    """What the results were measured on (written next to them)."""
    cpu = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        mpi = subprocess.run(
            ["mpirun", "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        ).stdout.splitlines()[0]
    except (OSError, IndexError):
        mpi = "unknown"
    try:
        load = os.getloadavg()
    except OSError:
        load = (float("nan"),) * 3
    return {
        "date_utc": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S"),
        "kernel": _platform.release(),
        "os": _platform.platform(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "load_average_at_start": [round(x, 2) for x in load],
        "python": _platform.python_version(),
        "mpi": mpi,
    }


def spec_info(spec: str) -> dict[str, Any]:
    from ..cluster.spec import load_spec

    s = load_spec(spec)
    return {"hosts": len(s.hosts), "rto_min_s": s.rto_min_ms / 1000.0, "name": s.name}


# ---------------------------------------------------------------- calibration


def sanitize_platform(src: str, dst: str, rto_s: float) -> list[str]:
    """Copy a fitted platform, with the fixes the validation needs; returns what was changed.

    * negative ``plogp`` times (noise on a loaded machine: g(m) from RTT(m) - RTT(0) + g(0)
      can come out below 0 for tiny m) are set to 0, since the platform loader refuses them;
    * a ``tcp`` section is added when missing: rto = the spec's minimum RTO (a configured
      value, not a fit), eps_S = 1e-3 and eps_T = 50 us (docs/models.md).
    """
    import yaml

    with open(src, encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    notes: list[str] = []

    def clamp(path: str, value: Any) -> Any:
        if isinstance(value, list):
            return [clamp(f"{path}[{i}]", v) for i, v in enumerate(value)]
        if isinstance(value, dict):
            return {k: clamp(f"{path}.{k}", v) for k, v in value.items()}
        if isinstance(value, float) and value < 0:
            notes.append(f"{path} = {value:.3g} s set to 0")
            return 0.0
        return value

    if "plogp" in data:
        data["plogp"] = clamp("plogp", data["plogp"])
    if "tcp" not in data:
        data["tcp"] = {"rto": rto_s, "eps_S": 1e-3, "eps_T": 5e-5}
        notes.append(
            f"tcp section added: rto {rto_s} s (the spec's minimum), eps_S 1e-3, eps_T 50 us"
        )
    with open(dst, "w", encoding="utf-8") as fh:
        fh.write(f"# {os.path.basename(src)} with the changes listed in calibration.json\n")
        yaml.safe_dump(data, fh, sort_keys=False, width=1000)
    return notes


def calibrate(
    cluster: str, spec: str, workdir: str, max_size: int, log: Log = _log_default
) -> tuple[str, dict[str, Any]]:
    """``measure plogp`` and ``measure tree`` on the cluster, ``fit``; the usable platform."""
    db = os.path.join(workdir, "calibration.duckdb")
    k_m = max(10, (max_size - 1).bit_length())
    log(f"calibration: measure plogp up to {max_size} B")
    mpirun(
        cluster, "measure", "plogp", "--db", db, "--quiet", "--max-size", str(max_size),
        "--k-m", str(k_m), "--max-reps", "20", "--max-reps-large", "5", "--bidirectional",
        log=log,
    )  # fmt: skip
    log("calibration: measure tree")
    mpirun(
        cluster, "measure", "tree", "--db", db, "--quiet", "--burst-bytes", "4MiB", "--reps", "3",
        log=log,
    )  # fmt: skip
    raw = os.path.join(workdir, "platform-fitted.yaml")
    commodel("fit", "--db", db, "-o", raw, log=log)
    usable = os.path.join(workdir, "platform.yaml")
    notes = sanitize_platform(raw, usable, spec_info(spec)["rto_min_s"])
    info = {"db": db, "fitted": raw, "platform": usable, "changes": notes}
    with open(os.path.join(workdir, "calibration.json"), "w", encoding="utf-8") as fh:
        json.dump(info, fh, indent=1)
    return usable, info


# ---------------------------------------------------------------- (a) Alltoall A vs B

ALGORITHMS = {"A": "alltoall-xor-pairwise", "B": "alltoall-xor-post-all"}


def size_label(size: int) -> str:
    for unit, factor in (("MiB", 1 << 20), ("KiB", 1024)):
        if size >= factor and size % factor == 0:
            return f"{size // factor}{unit}"
    return f"{size}B"


def part_alltoall(
    cluster: str,
    platform: str,
    ranks: int,
    sizes: list[int],
    reps: int,
    workdir: str,
    outdir: str,
    models: tuple[str, ...] = ("plogp", "plogpt", "maxmin"),
    log: Log = _log_default,
) -> list[dict[str, Any]]:
    """Measure and predict Alltoall A and B per size; rows of ``a-alltoall.csv``."""
    from ..schedules import collective, write_goal
    from .compare import picks
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


# ---------------------------------------------------------------- (b) many-to-one


def part_many_to_one(
    cluster: str,
    platform: str,
    ranks: int,
    sizes: list[int],
    reps: int,
    workdir: str,
    outdir: str,
    log: Log = _log_default,
    ns: list[int] | None = None,
) -> list[dict[str, Any]]:
    """Many-to-one with 3..P-1 senders (``ns``: n counts the root; default 4..P); held-out
    escalation frequencies vs the fit."""
    import numpy as np

    from ..db import ResultsDB
    from ..fit.manytoone import escalation_probability, fit_many_to_one, level_of
    from ..prediction import predict
    from ..schedules import collective

    db = os.path.join(workdir, "many-to-one.duckdb")
    ns = sorted(ns or range(4, ranks + 1))  # n counts the root: 3..P-1 senders
    log(f"many-to-one: n = {ns[0]}..{ns[-1]}, sizes {sizes}, {reps} repetitions")
    mpirun(
        cluster, "measure", "many-to-one", "--db", db, "--quiet", "--reps", str(reps),
        "--n", ",".join(map(str, ns)), "--sizes", ",".join(map(str, sizes)), log=log,
    )  # fmt: skip
    with ResultsDB(db, read_only=True) as rdb:
        camp = [c for c in rdb.campaigns() if c.benchmark == "many-to-one"][-1]
        samples = rdb.samples(camp.id)
    times = [s for s in samples if s["phase"] == "many-to-one" and s["quantity"] == "time"]
    train = [s for s in times if int(s["repetition"]) % 2 == 0]
    test = [s for s in times if int(s["repetition"]) % 2 == 1]
    sec = fit_many_to_one(train, camp.options)
    levels = sec["levels"]
    level_bounds = [[t] for t in levels]
    rows = []
    for n in ns:
        a, b = (
            sec["linear"]["intercept"][sec["n"].index(n)],
            sec["linear"]["slope"][sec["n"].index(n)],
        )
        for m in sizes:
            ts = [float(s["value_s"]) for s in test if s["n_ranks"] == n and s["size_bytes"] == m]
            if not ts:
                continue
            lin = max(a + b * m, 1e-12)
            esc = [
                t for t in ts if t > sec["escalation_factor"] * lin and t - lin > sec["min_excess"]
            ]
            row: dict[str, Any] = {
                "n_ranks": n,
                "senders": n - 1,
                "size_bytes": m,
                "test_reps": len(ts),
                "measured_median_s": float(np.median(ts)),
                "measured_p90_s": float(np.percentile(ts, 90)),
                "fit_linear_s": lin,
                "measured_escalated_fraction": len(esc) / len(ts),
                "fit_escalated_fraction": 0.0,
            }
            fit_total = 0.0
            for i, lv in enumerate(levels, start=1):
                f_meas = (
                    sum(1 for t in esc if level_of(t, level_bounds) == i) / len(ts) if esc else 0.0
                )
                f_fit = (
                    escalation_probability(sec["probability"][i - 1], n, m)
                    if sec["probability"]
                    else 0.0
                )
                row[f"level{i}_s"] = lv
                row[f"level{i}_measured_fraction"] = f_meas
                row[f"level{i}_fit_fraction"] = f_fit
                fit_total += f_fit
            row["fit_escalated_fraction"] = min(1.0, fit_total)
            # the fitted model's expected time: linear part plus the levels weighted by f_i
            row["fit_expected_s"] = lin * (1 - min(1.0, fit_total)) + sum(
                row[f"level{i}_fit_fraction"] * lv for i, lv in enumerate(levels, start=1)
            )
            row["measured_mean_s"] = float(np.mean(ts))
            pt = predict(
                collective("gather-basic-linear", n, m), _subset_platform(platform, n), "plogpt"
            )
            row["plogpt_gather_s"] = pt.makespan_s
            row["plogpt_gather_rto_events"] = len(pt.rto_events)
            rows.append(row)
    with open(os.path.join(outdir, "b-many-to-one-fit.json"), "w", encoding="utf-8") as fh:
        json.dump({k: sec[k] for k in ("n", "sizes", "M1", "Mc", "M2", "levels")}, fh, indent=1)
    write_rows(os.path.join(outdir, "b-many-to-one.csv"), rows)
    try:
        from ..report.validate_plots import scatter_plot

        pts: dict[str, list[tuple[float, float]]] = {}
        for s in times:
            pts.setdefault(f"n-1 = {int(s['n_ranks']) - 1} senders", []).append(
                (
                    float(s["size_bytes"]) * 2 ** (0.06 * (int(s["n_ranks"]) - ns[0])),
                    float(s["value_s"]),
                )
            )
        scatter_plot(
            pts, os.path.join(outdir, "b-many-to-one.png"),
            "many-to-one to rank 0: every repetition (sizes staggered per n)",
            "message size M [B]", "time [s]",
        )  # fmt: skip
    except CommodelError as exc:
        log(f"no plots: {exc}")
    return rows


def _subset_platform(platform: str, n: int) -> Any:
    """The platform as is (the gather runs on ranks 0..n-1 = hosts h0..h(n-1))."""
    from ..platform import load_platform

    p = load_platform(platform)
    if n > p.nodes:
        raise CommodelError(f"{platform}: {n} ranks but only {p.nodes} nodes")
    return p


# ---------------------------------------------------------------- (c) random patterns

RANDOM_MODELS = ("zhu", "zhu-fair", "maxmin", "plogpt")


def part_random(
    cluster: str,
    platform: str,
    ranks: int,
    degrees: list[int],
    trials: int,
    size: int,
    reps: int,
    seed: int,
    workdir: str,
    outdir: str,
    log: Log = _log_default,
) -> list[dict[str, Any]]:
    """Zhu section 7: random-pairs of degree d; fraction within 10% per model."""
    from ..schedules import collective, write_goal
    from .runner import validate, write_report

    rows = []
    for d in degrees:
        sdir = os.path.join(workdir, f"random-d{d}")
        os.makedirs(sdir, exist_ok=True)
        paths = []
        for t in range(trials):
            path = os.path.join(sdir, f"random-pairs-d{d}-s{seed + t}-{size_label(size)}.goal")
            write_goal(collective("random-pairs", ranks, size, seed=seed + t, degree=d), path)
            paths.append(path)
        db = os.path.join(workdir, "random.duckdb")
        v = validate(
            paths, platform, list(RANDOM_MODELS), db, cluster=cluster, max_reps=reps, progress=log
        )
        write_report(v, os.path.join(outdir, f"c-random-d{d}-report"))
        for model in RANDOM_MODELS:
            for scope in ("makespans", "messages"):
                s = v.summary(model, scope)
                rows.append({"degree": d, "model": model, "scope": scope, **s.as_dict()})
    write_rows(os.path.join(outdir, "c-random.csv"), rows)
    return rows


# ---------------------------------------------------------------- output


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


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())[:12] or "cm"


def copy_platform(info: dict[str, Any], outdir: str) -> None:
    for key in ("fitted", "platform"):
        shutil.copy(info[key], os.path.join(outdir, os.path.basename(info[key])))


def _read(path: str) -> list[dict[str, str]]:
    if not os.path.exists(path):
        return []
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _pct(text: str) -> str:
    return "" if text in ("", None) else f"{100 * float(text):+.0f}%"


def _ms(text: str) -> str:
    return "" if text in ("", None) else f"{1000 * float(text):.3g}"


def write_summary(outdir: str, title: str) -> str:
    """``summary.md``: the tables of the CSVs of one spec's run (generated, not edited)."""
    lines = [f"# {title}", "", "Generated by scripts/experiment.py from the CSV files here.", ""]
    meta = {}
    if os.path.exists(os.path.join(outdir, "run.json")):
        with open(os.path.join(outdir, "run.json"), encoding="utf-8") as fh:
            meta = json.load(fh)
    if meta:
        m = meta.get("machine", {})
        lines += [
            f"Measured {m.get('date_utc')} UTC on {m.get('cpu')} ({m.get('cores')} cores), "
            f"{m.get('os')}, {m.get('mpi')}; load average {m.get('load_average_at_start')} "
            f"at start, {m.get('load_average_at_end')} at the end; {meta.get('elapsed_s')} s.",
            "",
            f"Options: `{json.dumps(meta.get('options'), sort_keys=True)}`",
            "",
        ]
    a = _read(os.path.join(outdir, "a-alltoall.csv"))
    if a:
        models = [k[: -len("_pick")] for k in a[0] if k.endswith("_pick") and k != "measured_pick"]
        lines += ["## (a) Alltoall A (xor pairwise) vs B (post all receives)", ""]
        head = "| size | A [ms] | B [ms] | TCP RTOs A/B | faster |"
        sep = "|---:|---:|---:|---:|:---:|"
        for mod in models:
            head += f" {mod} A | {mod} B | {mod} picks |"
            sep += "---:|---:|:---:|"
        lines += [head, sep]
        for r in a:
            tcp = f"{r.get('tcp_timeouts_A', '')}/{r.get('tcp_timeouts_B', '')}"
            row = (
                f"| {size_label(int(r['size_bytes']))} | {_ms(r['measured_A_s'])} | "
                f"{_ms(r['measured_B_s'])} | {tcp} | {r['measured_pick']} |"
            )
            for mod in models:
                rto = "".join(
                    " (RTO)" if r.get(f"{mod}_{k}_rto") not in ("", "0", None) else ""
                    for k in ("A",)
                )
                rto_b = " (RTO)" if r.get(f"{mod}_B_rto") not in ("", "0", None) else ""
                row += (
                    f" {_pct(r[f'{mod}_A_err'])}{rto} | {_pct(r[f'{mod}_B_err'])}{rto_b} | "
                    f"{r[f'{mod}_pick']} |"
                )
            lines.append(row)
        lines += ["", "Errors are (predicted - measured) / measured of the median makespan.", ""]
    c = _read(os.path.join(outdir, "c-random.csv"))
    if c:
        lines += ["## (c) random patterns: fraction within +-10%", ""]
        lines += ["| d | model | makespans within | messages within | mean abs err (messages) |"]
        lines += ["|---:|---|---:|---:|---:|"]
        by = {(r["degree"], r["model"], r["scope"]): r for r in c}
        for d, mod in sorted(
            {(r["degree"], r["model"]) for r in c}, key=lambda x: (int(x[0]), x[1])
        ):
            mk, ms = by[(d, mod, "makespans")], by[(d, mod, "messages")]

            def frac(r: dict[str, str]) -> str:
                if r["count"] in ("", "0"):
                    return "n/a"
                return f"{r['within']}/{r['count']} = {100 * float(r['fraction_within']):.0f}%"

            mae = "" if ms["mean_abs_error"] == "" else f"{100 * float(ms['mean_abs_error']):.0f}%"
            lines.append(f"| {d} | {mod} | {frac(mk)} | {frac(ms)} | {mae} |")
        lines.append("")
    b = _read(os.path.join(outdir, "b-many-to-one.csv"))
    if b:
        lines += [
            "## (b) many-to-one: held-out repetitions vs the model fitted on the others",
            "",
            "| senders | M | median [ms] | mean [ms] | fit expected [ms] | escalated measured | "
            "escalated fit | plogpt gather [ms] |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in b:
            rto = " (RTO)" if r.get("plogpt_gather_rto_events") not in ("", "0") else ""
            lines.append(
                f"| {r['senders']} | {size_label(int(r['size_bytes']))} | "
                f"{_ms(r['measured_median_s'])} | {_ms(r['measured_mean_s'])} | "
                f"{_ms(r['fit_expected_s'])} | {100 * float(r['measured_escalated_fraction']):.0f}% | "
                f"{100 * float(r['fit_escalated_fraction']):.0f}% | {_ms(r['plogpt_gather_s'])}{rto} |"
            )
        fit = os.path.join(outdir, "b-many-to-one-fit.json")
        if os.path.exists(fit):
            with open(fit, encoding="utf-8") as fh:
                f = json.load(fh)
            levels = ", ".join(f"{1000 * x:.3g}" for x in f.get("levels", []))
            lines += ["", f"Fitted (even repetitions): M1 = {f['M1']} per n {f['n']}, M2 = {f['M2']}, "
                      f"levels [ms] = {levels}."]  # fmt: skip
        lines.append("")
    rto = _read(os.path.join(outdir, "b-many-to-one-rto.csv"))
    if rto:
        sizes = sorted({int(r["size_bytes"]) for r in rto})
        lines += [
            "### many-to-one: repetitions that hit a TCP retransmission timeout",
            "",
            "All repetitions (not only the held-out half); a repetition counts when it took at "
            "least 0.75 RTO_min.",
            "",
            "| senders | " + " | ".join(size_label(m) for m in sizes) + " |",
            "|---:|" + "---:|" * len(sizes),
        ]
        by = {(r["senders"], int(r["size_bytes"])): r for r in rto}
        for n in sorted({r["senders"] for r in rto}, key=int):
            cells = []
            for m in sizes:
                r = by.get((n, m))
                cells.append("" if r is None else f"{r['rto_reps']}/{r['reps']}")
            lines.append(f"| {n} | " + " | ".join(cells) + " |")
        lines.append("")
    path = os.path.join(outdir, "summary.md")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    return path


def many_to_one_rto_table(db: str, rto_min_s: float, outdir: str) -> list[dict[str, Any]]:
    """Per (n, M) of the latest many-to-one campaign: how many repetitions (all of them)
    took at least 0.75 RTO_min, i.e. hit a retransmission timeout (the escalation level
    that matters on the emulated cluster); written to ``b-many-to-one-rto.csv``."""
    import numpy as np

    from ..db import ResultsDB

    with ResultsDB(db, read_only=True) as rdb:
        camp = [c for c in rdb.campaigns() if c.benchmark == "many-to-one"][-1]
        samples = [s for s in rdb.samples(camp.id) if s["quantity"] == "time"]
    table: dict[tuple[int, int], list[float]] = {}
    for s in samples:
        table.setdefault((int(s["n_ranks"]), int(s["size_bytes"])), []).append(float(s["value_s"]))
    rows = []
    for (n, m), ts in sorted(table.items()):
        t = np.asarray(ts)
        rto = t[t >= 0.75 * rto_min_s]
        rows.append(
            {
                "senders": n - 1,
                "size_bytes": m,
                "reps": len(t),
                "rto_reps": int(len(rto)),
                "rto_fraction": len(rto) / len(t),
                "median_s": float(np.median(t)),
                "min_s": float(t.min()),
                "median_of_rto_reps_s": float(np.median(rto)) if len(rto) else None,
                "max_s": float(t.max()),
            }
        )
    write_rows(os.path.join(outdir, "b-many-to-one-rto.csv"), rows)
    return rows
