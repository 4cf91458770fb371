"""Bring an emulated cluster up and calibrate it: the library calls of the cluster demo.

:func:`cluster_up` brings a cluster up from a spec and always down again; :func:`calibrate`
runs ``measure plogp`` and ``measure tree`` on it (through ``cluster mpirun``), ``fit``,
and writes the platform the validation uses (:func:`sanitize_platform`). Each step runs
``python -m commodel`` in a subprocess (:func:`run_commodel`), as a user would. Root only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Callable

from ..errors import CommodelError

PY = sys.executable

Log = Callable[[str], None]


def log_to_stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def run_commodel(*args: str, log: Log = log_to_stderr, check: bool = True) -> str:
    """Run ``python -m commodel ARGS``; return its standard output (raise on failure)."""
    cmd = [PY, "-m", "commodel", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if check and proc.returncode:
        log(proc.stdout[-3000:])
        log(proc.stderr[-3000:])
        raise CommodelError(f"`commodel {' '.join(args)}` failed with exit code {proc.returncode}")
    return proc.stdout


def cluster_mpirun(cluster: str, *args: str, log: Log = log_to_stderr) -> str:
    """``cluster mpirun --name CLUSTER -- python -m commodel ARGS``."""
    return run_commodel(
        "cluster", "mpirun", "--name", cluster, "--", PY, "-m", "commodel", *args, log=log
    )


@contextmanager
def cluster_up(spec: str, name: str, log: Log = log_to_stderr) -> Iterator[str]:
    """Bring a cluster up and always down again (also on errors and Ctrl-C)."""
    if os.geteuid() != 0:
        raise CommodelError("the emulated cluster needs root (see docs/cluster.md)")
    try:
        log(run_commodel("cluster", "up", "--spec", spec, "--name", name, log=log).strip())
        yield name
    finally:
        out = run_commodel("cluster", "down", "--name", name, log=log, check=False)
        log(out.strip())


def spec_info(spec: str) -> dict[str, Any]:
    from ..cluster.spec import load_spec

    s = load_spec(spec)
    return {"hosts": len(s.hosts), "rto_min_s": s.rto_min_ms / 1000.0, "name": s.name}


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
    cluster: str, spec: str, workdir: str, max_size: int, log: Log = log_to_stderr
) -> tuple[str, dict[str, Any]]:
    """``measure plogp`` and ``measure tree`` on the cluster, ``fit``; the usable platform."""
    db = os.path.join(workdir, "calibration.duckdb")
    k_m = max(10, (max_size - 1).bit_length())
    log(f"calibration: measure plogp up to {max_size} B")
    cluster_mpirun(
        cluster, "measure", "plogp", "--db", db, "--quiet", "--max-size", str(max_size),
        "--k-m", str(k_m), "--max-reps", "20", "--max-reps-large", "5", "--bidirectional",
        log=log,
    )  # fmt: skip
    log("calibration: measure tree")
    cluster_mpirun(
        cluster, "measure", "tree", "--db", db, "--quiet", "--burst-bytes", "4MiB", "--reps", "3",
        log=log,
    )  # fmt: skip
    raw = os.path.join(workdir, "platform-fitted.yaml")
    run_commodel("fit", "--db", db, "-o", raw, log=log)
    usable = os.path.join(workdir, "platform.yaml")
    notes = sanitize_platform(raw, usable, spec_info(spec)["rto_min_s"])
    info = {"db": db, "fitted": raw, "platform": usable, "changes": notes}
    with open(os.path.join(workdir, "calibration.json"), "w", encoding="utf-8") as fh:
        json.dump(info, fh, indent=1)
    return usable, info
