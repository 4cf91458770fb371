"""Measure one cluster of the held-out study: up, calibrate, the workload, down.

Every step runs ``python -m commodel`` as a user would (``cluster up``, ``cluster mpirun
-- ... calibrate``, ``measure pattern``, ``measure collective``), into files of the spec's
directory, so that scoring (:mod:`commodel.study.score`) needs no cluster and can be
repeated offline after a model or fit change:

=================== ===========================================================
``spec.yaml``       the drawn spec (ground truth: only the report reads it)
``cal.duckdb``      the calibration's campaigns; ``platform.yaml`` what it fitted
``calibrate.log``   calibrate's output (its parts and their times)
``pattern.duckdb``  ``measure pattern`` of every workload schedule (``schedules/``)
``counters.json``   per schedule: the TCP timeouts and retransmissions the hosts counted
``forced.duckdb``   ``measure collective`` of every forced Open MPI algorithm
``measured.json``   what was measured and how long each part took
=================== ===========================================================

A killed run resumes: calibrate continues its database, a schedule in ``counters.json`` is
not measured again, the sweep keeps complete campaigns, and ``measured.json`` marks a spec
whose measurement finished.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any, Callable

import yaml

from ..errors import CommodelError
from . import workload

PY = sys.executable
Log = Callable[[str], None]


def _json_load(path: str, default: Any) -> Any:
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, json.JSONDecodeError):
        return default


def _json_dump(path: str, value: Any) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(value, fh, indent=1, sort_keys=True)
        fh.write("\n")
    os.replace(tmp, path)


def _commodel(args: list[str], logfile: str, log: Log) -> None:
    """``python -m commodel ARGS``, its output appended to ``logfile``; raise on failure."""
    with open(logfile, "a", encoding="utf-8") as fh:
        fh.write(f"$ commodel {' '.join(args)}\n")
        fh.flush()
        rc = subprocess.run([PY, "-m", "commodel", *args], stdout=fh, stderr=fh).returncode
    if rc:
        with open(logfile, encoding="utf-8") as fh:
            tail = fh.read()[-2000:]
        log(tail)
        raise CommodelError(f"`commodel {' '.join(args[:4])} ...` failed (exit {rc}); {logfile}")


def cluster_id(spec_name: str) -> str:
    """The emulated cluster's name for draw ``rs<seed>x<index>``: ``s<seed>d<index>``, one
    name per draw (``rs1x12`` and ``rs11x2`` must not meet)."""
    seed, index = spec_name[2:].split("x")
    return f"s{seed}d{index}"[:16]


def write_spec(spec: dict[str, Any], workdir: str) -> str:
    os.makedirs(workdir, exist_ok=True)
    path = os.path.join(workdir, "spec.yaml")
    with open(path, "w", encoding="utf-8") as fh:
        yaml.safe_dump(spec, fh, sort_keys=False)
    return path


def measure_spec(
    spec: dict[str, Any],
    workdir: str,
    log: Log,
    parts: tuple[str, ...] = ("all",),
    work: workload.Workload = workload.FULL,
) -> dict[str, Any]:
    """Bring the cluster of ``spec`` up in ``workdir``, measure, and bring it down."""
    from ..validate.calibration import cluster_up

    done_path = os.path.join(workdir, "measured.json")
    done = _json_load(done_path, {})
    if done.get("complete"):
        log(f"{spec['name']}: measured before, kept")
        return done
    spec_path = write_spec(spec, workdir)
    name = cluster_id(spec["name"])
    hosts = int(spec["hosts"])
    elapsed: dict[str, float] = dict(done.get("elapsed_s", {}))
    # a cluster of this draw left by a killed run: ours to remove (the name is the draw's)
    subprocess.run([PY, "-m", "commodel", "cluster", "down", "--name", name], capture_output=True)
    with cluster_up(spec_path, name, log=log):
        want = set(parts)
        if want & {"all", "calibrate"}:
            start = time.monotonic()
            _commodel(
                ["cluster", "mpirun", "--name", name, "--", PY, "-m", "commodel", "calibrate",
                 "--db", os.path.join(workdir, "cal.duckdb"), "--quiet",
                 "-o", os.path.join(workdir, "platform.yaml")],
                os.path.join(workdir, "calibrate.log"), log,
            )  # fmt: skip
            elapsed.setdefault("calibrate", time.monotonic() - start)
            log(f"{spec['name']}: calibrated in {elapsed['calibrate']:.0f} s")
        if want & {"all", "schedules"}:
            start = time.monotonic()
            _measure_schedules(name, hosts, workdir, log, work)
            elapsed["schedules"] = elapsed.get("schedules", 0.0) + time.monotonic() - start
        if want & {"all", "forced"}:
            start = time.monotonic()
            failed = _measure_forced(name, hosts, workdir, log, work)
            elapsed["forced"] = elapsed.get("forced", 0.0) + time.monotonic() - start
            done["forced_failed"] = failed
        done["serialize"] = _serialize_lateness(name)
    done.update({"elapsed_s": elapsed, "complete": "all" in parts, "hosts": hosts})
    _json_dump(done_path, done)
    return done


def _measure_schedules(
    cluster: str, hosts: int, workdir: str, log: Log, work: workload.Workload
) -> None:
    from ..validate.runner import run_pattern

    db = os.path.join(workdir, "pattern.duckdb")
    path = os.path.join(workdir, "counters.json")
    counters = _json_load(path, {})
    scheds = workload.write_schedules(hosts, os.path.join(workdir, "schedules"), work)
    for i, s in enumerate(scheds, 1):
        key = os.path.basename(s.path)
        if key in counters:
            continue
        log(f"  [{i}/{len(scheds)}] {key}")
        start = time.monotonic()
        counters[key] = run_pattern(cluster, s.path, db, work.pattern_reps, timeout=300.0)
        counters[key]["elapsed_s"] = round(time.monotonic() - start, 2)
        _json_dump(path, counters)


def _measure_forced(
    cluster: str, hosts: int, workdir: str, log: Log, work: workload.Workload
) -> list[str]:
    from ..measure.collective import SweepRun, sweep_algorithms, sweep_campaigns

    db = os.path.join(workdir, "forced.duckdb")
    mpirun = [PY, "-m", "commodel", "cluster", "mpirun", "--name", cluster, "--"]
    failed = []
    for coll in work.forced_collectives:
        given = {
            "collective": coll,
            "sizes": list(work.forced_sizes),
            "root": 0,
            "min_reps": work.forced_min_reps,
            "max_reps": work.forced_max_reps,
            "budget": None,
        }
        runs = [SweepRun(0)] + [SweepRun(a, a) for a in sweep_algorithms(coll, hosts) if a]
        log(f"  forced {coll}: {len(runs)} runs")
        with open(os.path.join(workdir, "forced.log"), "a", encoding="utf-8") as fh:
            saved = sys.stdout
            sys.stdout = fh
            try:
                _, bad = sweep_campaigns(db, given, hosts, mpirun, runs, quiet=True, python=PY)
            finally:
                sys.stdout = saved
        failed += [f"{coll} {b}" for b in bad]
    return failed


def _serialize_lateness(cluster: str) -> dict[str, float]:
    """The serialization daemon's lateness over the run (``shaping: serialize``): the mean
    and largest of its ports' mean lateness, microseconds; {} without the daemon."""
    from ..cluster.serialize import read_stats
    from ..cluster.state import read_state

    record = read_state(cluster) or {}
    stats = read_stats(record)
    if not stats:
        return {}
    means = [float(p.get("late_mean_us", 0.0)) for p in stats.values() if p.get("frames")]
    if not means:
        return {}
    return {"late_mean_us": sum(means) / len(means), "late_max_port_us": max(means)}
