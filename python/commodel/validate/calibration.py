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


def tree_buffers(spec: str, ranks: int | None = None) -> list[int]:
    """The port buffer (bytes) behind each height h = 1..D of the binary tree that
    ``calibrate`` fits on the cluster of ``spec`` with ``ranks`` ranks (default: one per
    host; 2^D <= ranks, rank r on host r): the switch port toward a host where the 2^h
    ranks under every height-h edge share a switch (one rack; the hosts' own links), the
    port on an inter-switch link otherwise."""
    from ..cluster.spec import load_spec

    s = load_spec(spec)
    depth = min(ranks or len(s.hosts), len(s.hosts)).bit_length() - 1
    if s.topology.kind == "racks":
        rack_of = {host: i for i, rack in enumerate(s.topology.racks) for host in rack}
    else:  # a switch above every pair of hosts
        rack_of = {host: host // 2 for host in range(len(s.hosts))}
    out = []
    for h in range(1, depth + 1):
        blocks = [range(b, b + (1 << h)) for b in range(0, 1 << depth, 1 << h)]
        shared = h == 1 or all(len({rack_of[r] for r in blk}) == 1 for blk in blocks)
        out.append(s.switch_port_buffer if shared else s.backbone_port_buffer)
    return out


def calibrate(
    cluster: str,
    workdir: str,
    max_size: int,
    log: Log = log_to_stderr,
    buffer: list[int] | None = None,
) -> tuple[str, dict[str, Any]]:
    """``commodel calibrate`` (tcp, plogp up to ``max_size``, tree, efficiency, wire) on the cluster,
    with the switches' port buffers ``buffer`` (bytes per tree height, :func:`tree_buffers`)
    if given; returns the platform file it fitted and what was done (also written to
    calibration.json)."""
    db = os.path.join(workdir, "calibration.duckdb")
    platform = os.path.join(workdir, "platform.yaml")
    log(f"calibration: commodel calibrate (tcp, plogp up to {max_size} B, tree, efficiency, wire)")
    extra = ["--buffer", ",".join(str(b) for b in buffer)] if buffer else []
    cluster_mpirun(
        cluster, "calibrate", "--db", db, "--parts", "tcp,plogp,tree,efficiency,wire",
        "--max-size", str(max_size), "--quiet", "-o", platform, *extra, log=log,
    )  # fmt: skip
    parts = ["tcp", "plogp", "tree", "efficiency", "wire"]
    info = {"db": db, "platform": platform, "parts": parts, "buffer": buffer}
    with open(os.path.join(workdir, "calibration.json"), "w", encoding="utf-8") as fh:
        json.dump(info, fh, indent=1)
    return platform, info
