"""The validation study's parts beyond Alltoall A/B (``make experiment``, study/scripts/experiment.py).

Every number written comes from a run made by these functions and by the library calls
they use (:mod:`commodel.validate.calibration`: cluster bring-up and calibration;
:mod:`commodel.validate.alltoall_measured`: part (a), Alltoall A against B):

* (b) :func:`part_many_to_one`: ``measure many-to-one`` with n - 1 = 3..P-1 senders, the
  escalation levels and frequencies of one half of the repetitions against the model fitted
  on the other half (and the plogpt prediction of the linear gather);
* (c) :func:`part_random`: random-pairs schedules of degree d: fraction within 10% for
  tcpflow, zhu, zhu-fair, maxmin, plogpt and plogp;
* :func:`write_summary`: ``summary.md`` from the CSV files of a run.
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
from typing import Any

from commodel.errors import CommodelError
from commodel.validate.alltoall_measured import size_label, write_rows
from commodel.validate.calibration import Log, cluster_mpirun, log_to_stderr


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


# ---------------------------------------------------------------- (b) many-to-one


def part_many_to_one(
    cluster: str,
    platform: str,
    ranks: int,
    sizes: list[int],
    reps: int,
    workdir: str,
    outdir: str,
    log: Log = log_to_stderr,
    ns: list[int] | None = None,
) -> list[dict[str, Any]]:
    """Many-to-one with 3..P-1 senders (``ns``: n counts the root; default 4..P); held-out
    escalation frequencies vs the fit."""
    import numpy as np

    from commodel.db import ResultsDB
    from commodel.fit.manytoone import escalation_probability, fit_many_to_one, level_of
    from commodel.prediction import predict
    from commodel.schedules import collective

    db = os.path.join(workdir, "many-to-one.duckdb")
    ns = sorted(ns or range(4, ranks + 1))  # n counts the root: 3..P-1 senders
    log(f"many-to-one: n = {ns[0]}..{ns[-1]}, sizes {sizes}, {reps} repetitions")
    cluster_mpirun(
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
        from commodel.report.validate_plots import scatter_plot

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
    from commodel.platform import load_platform

    p = load_platform(platform)
    if n > p.nodes:
        raise CommodelError(f"{platform}: {n} ranks but only {p.nodes} nodes")
    return p


# ---------------------------------------------------------------- (c) random patterns

RANDOM_MODELS = ("tcpflow", "zhu", "zhu-fair", "maxmin", "plogpt", "plogp")


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
    log: Log = log_to_stderr,
) -> list[dict[str, Any]]:
    """Zhu section 7: random-pairs of degree d; fraction within 10% per model."""
    from commodel.schedules import collective, write_goal
    from commodel.validate.runner import validate, write_report

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


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())[:12] or "cm"


def copy_platform(info: dict[str, Any], outdir: str) -> None:
    shutil.copy(info["platform"], os.path.join(outdir, os.path.basename(info["platform"])))


def _read(path: str) -> list[dict[str, str]]:
    if not os.path.exists(path):
        return []
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _pct(text: str) -> str:
    return "" if text in ("", None) else f"{100 * float(text):+.0f}%"


def _ms(text: str) -> str:
    return "" if text in ("", None) else f"{1000 * float(text):.3g}"


def alltoall_within(a: list[dict[str, str]], mod: str) -> tuple[int, int, int]:
    """Model ``mod`` on Alltoall A and B from 16 KiB: (points within +-10%, beyond +-20%,
    points)."""
    errs = [
        abs(float(r[f"{mod}_{k}_err"]))
        for r in a
        if int(r["size_bytes"]) >= 16384
        for k in ("A", "B")
    ]
    return sum(e <= 0.10 for e in errs), sum(e > 0.20 for e in errs), len(errs)


def alltoall_scores(a: list[dict[str, str]], models: list[str]) -> list[str]:
    """Per model, the targets of part (a): makespans from 16 KiB within +-10% and none beyond
    +-20%; the right pick where the measured ranges of A and B do not overlap; RTOs predicted
    (any in the run) against the runs in which the hosts counted timeouts."""
    apart = [
        r
        for r in a
        if float(r["measured_A_max_s"]) < float(r["measured_B_min_s"])
        or float(r["measured_B_max_s"]) < float(r["measured_A_min_s"])
    ]
    runs = [(r, k) for r in a for k in ("A", "B") if r.get(f"tcp_timeouts_{k}") not in ("", None)]
    out = [
        "| model | within +-10% (>= 16 KiB) | beyond +-20% | right picks where A and B "
        "do not overlap | RTO precision | RTO recall |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for mod in models:
        within, beyond, points = alltoall_within(a, mod)
        right = sum(r[f"{mod}_pick"] == r["measured_pick"] for r in apart)
        pred = [r.get(f"{mod}_{k}_rto") not in ("", "0", None) for r, k in runs]
        seen = [int(r[f"tcp_timeouts_{k}"]) > 0 for r, k in runs]
        tp = sum(p and s for p, s in zip(pred, seen))
        prec = f"{tp}/{sum(pred)}" if sum(pred) else "- (none predicted)"
        rec = f"{tp}/{sum(seen)}" if sum(seen) else "- (none counted)"
        out.append(
            f"| {mod} | {within}/{points} | {beyond}/{points} | "
            f"{right}/{len(apart)} | {prec} | {rec} |"
        )
    return out + [""]


def write_summary(outdir: str, title: str) -> str:
    """``summary.md``: the tables of the CSVs of one spec's run (generated, not edited)."""
    lines = [f"# {title}", "", "Generated by study/scripts/experiment.py from the CSV files here.", ""]
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
        lines += alltoall_scores(a, models)
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

    from commodel.db import ResultsDB

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


def targets_table(outdirs: list[str]) -> str:
    """One markdown table of the accuracy targets over study directories (study):
    per cluster and model, Alltoall A/B from 16 KiB within +-10% and beyond +-20%, random
    makespans and messages within +-10% per degree, and many-to-one escalation frequencies
    within 0.1 of the held-out repetitions."""
    lines = [
        "| cluster | model | Alltoall >= 16 KiB within 10% | beyond 20% | random d=1 / 2 / 3 "
        "makespans within 10% | messages within 10% |",
        "|---|---|---:|---:|---:|---:|",
    ]
    m2o = []
    for outdir in outdirs:
        name = os.path.basename(outdir.rstrip("/")).split("-", 3)[-1]
        a = [
            r
            for r in _read(os.path.join(outdir, "a-alltoall.csv"))
            if int(r["size_bytes"]) >= 16384
        ]
        c = _read(os.path.join(outdir, "c-random.csv"))
        models = sorted({r["model"] for r in c})
        for mod in models:
            cell_a = cell_b = "-"
            if a and f"{mod}_A_err" in a[0]:
                within, beyond, points = alltoall_within(a, mod)
                cell_a, cell_b = f"{within}/{points}", f"{beyond}/{points}"
            by = {(r["degree"], r["scope"]): r for r in c if r["model"] == mod}

            def frac(scope: str, by: dict = by) -> str:
                degrees = sorted({k[0] for k in by}, key=int)
                return " / ".join(
                    f"{100 * float(by[(d, scope)]['fraction_within']):.0f}%" for d in degrees
                )

            lines.append(
                f"| {name} | {mod} | {cell_a} | {cell_b} | {frac('makespans')} | "
                f"{frac('messages')} |"
            )
        b = _read(os.path.join(outdir, "b-many-to-one.csv"))
        if b:
            ok = sum(
                abs(float(r["measured_escalated_fraction"]) - float(r["fit_escalated_fraction"]))
                <= 0.1
                for r in b
            )
            m2o.append(f"{name}: {ok}/{len(b)}")
    lines.append("")
    if m2o:
        lines.append(
            "Many-to-one, (n, M) points whose escalated fraction is within 0.1 of the "
            "held-out repetitions: " + "; ".join(m2o) + "."
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # python study/scripts/study.py DIR... : the targets table
    import sys

    print(targets_table(sys.argv[1:]))
