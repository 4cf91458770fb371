"""Bring an emulated cluster up and calibrate it: the library calls of the cluster demo.

:func:`cluster_up` brings a cluster up from a spec and always down again; :func:`calibrate`
runs ``commodel calibrate`` on it (through ``cluster mpirun``), which measures and fits the
platform the validation uses. Each step runs ``python -m commodel`` in a subprocess
(:func:`run_commodel`), as a user would. Root only.
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
    """Bring a cluster up and always down again (also on errors, Ctrl-C, SIGTERM, SIGHUP)."""
    from ..cluster.control import signals_raise

    if os.geteuid() != 0:
        raise CommodelError("the emulated cluster needs root (see docs/cluster.md)")
    with signals_raise():
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


def calibrate(
    cluster: str, workdir: str, max_size: int, log: Log = log_to_stderr
) -> tuple[str, dict[str, Any]]:
    """``commodel calibrate`` (tcp, plogp up to ``max_size``, tree, efficiency) on the cluster;
    returns
    the platform file it fitted and what was done (also written to calibration.json)."""
    db = os.path.join(workdir, "calibration.duckdb")
    platform = os.path.join(workdir, "platform.yaml")
    log(f"calibration: commodel calibrate (tcp, plogp up to {max_size} B, tree, efficiency)")
    cluster_mpirun(
        cluster, "calibrate", "--db", db, "--parts", "tcp,plogp,tree,efficiency",
        "--max-size", str(max_size), "--quiet", "-o", platform, log=log,
    )  # fmt: skip
    info = {"db": db, "platform": platform, "parts": ["tcp", "plogp", "tree", "efficiency"]}
    with open(os.path.join(workdir, "calibration.json"), "w", encoding="utf-8") as fh:
        json.dump(info, fh, indent=1)
    return platform, info
