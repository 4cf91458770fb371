"""commodel validate end to end on the emulated two-rack-8 cluster (root; < 2 minutes).

Brings up its own cluster (named ``cmvaltest``), runs ``commodel validate --cluster`` on two
Alltoall schedules with real Open MPI over real TCP, checks the report against the
physics of the cluster, and brings the cluster down in ``finally``; afterwards no namespace
of that cluster may remain. Skipped, with the reason, when not root, when network
namespaces cannot be created, or when mpirun or mpi4py is missing.
"""

from __future__ import annotations

import contextlib
import csv
import os
import shutil
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPEC = os.path.join(ROOT, "examples", "clusters", "two-rack-8.yaml")
NAME = "cmvaltest"
ENV = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "python")}


def _unavailable() -> str | None:
    if os.geteuid() != 0:
        return "the emulated cluster needs root (network namespaces, veth, tc)"
    if shutil.which("mpirun") is None:
        return "mpirun is missing (apt-get install openmpi-bin)"
    try:
        import duckdb  # noqa: F401
        import mpi4py  # noqa: F401
    except ImportError as exc:
        return f"{exc.name} is missing (pip install 'commodel[measure,fit]')"
    probe = f"cm-probe{os.getpid()}-v"
    added = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if added.returncode != 0:
        return f"network namespaces are unavailable: {added.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


UNAVAILABLE = _unavailable()

PLATFORM = """\
commodel_platform: 1
name: two-rack-8-nominal
nodes: 8
hockney:                 # 100 Mbit/s NICs at the TCP payload ceiling, 100 us per message
  alpha: 1.0e-4
  beta: 8.37e-8          # s/B = 1 / (95.6 Mbit/s / 8)
"""


def _commodel(*args: str, timeout: float = 100) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "commodel", *args],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=timeout,
    )


def _our_namespaces() -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith(f"cm-{NAME}-")]


@pytest.mark.cluster
@pytest.mark.mpi
@pytest.mark.skipif(UNAVAILABLE is not None, reason=UNAVAILABLE or "")
def test_validate_on_two_rack_8(tmp_path):
    t0 = time.monotonic()
    plat = tmp_path / "nominal.yaml"
    plat.write_text(PLATFORM)
    schedules = []
    for size in ("4KiB", "64KiB"):
        path = str(tmp_path / f"alltoall-xor-pairwise-{size}.goal")
        made = _commodel(
            "schedule", "alltoall-xor-pairwise", "--ranks", "8", "--size", size, "-o", path
        )
        assert made.returncode == 0, made.stderr
        schedules.append(path)
    db, out = str(tmp_path / "v.duckdb"), tmp_path / "report"
    try:
        up = _commodel("cluster", "up", "--spec", SPEC, "--name", NAME)
        assert up.returncode == 0, up.stderr
        run = _commodel(
            "validate", "--platform", str(plat), "--schedules", *schedules, "--cluster", NAME,
            "--db", db, "--reps", "6", "--models", "hockney,plogp", "-o", str(out),
        )  # fmt: skip
        assert run.returncode == 0, run.stderr + run.stdout
    finally:
        down = _commodel("cluster", "down", "--name", NAME)
    assert down.returncode == 0, down.stderr
    assert _our_namespaces() == []
    assert not os.path.exists(f"/run/commodel/{NAME}.json")
    # the report: both schedules measured, 56 messages each, the plogp model unavailable
    with open(out / "makespans.csv") as fh:
        rows = [r for r in csv.DictReader(fh) if r["model"] == "hockney"]
    assert [r["family"] for r in rows] == ["alltoall-xor-pairwise"] * 2
    assert [int(r["size_bytes"]) for r in rows] == [4096, 65536]
    for r in rows:
        assert 5 <= int(r["reps"]) <= 6
        assert (
            float(r["measured_min_s"])
            <= float(r["measured_median_s"])
            <= float(r["measured_max_s"])
        )
    # physics: every rank sends 7 x 64 KiB through its 100 Mbit/s NIC (and the 4 cross-rack
    # rounds share the 200 Mbit/s backbone 4 ways: 50 Mbit/s per flow), so the 64 KiB
    # Alltoall cannot beat 3 x 5.5 ms + 4 x 11 ms at the payload ceiling
    lower = 3 * 65536 * 8 / 95.6e6 + 4 * 65536 * 8 / (95.6e6 / 2)
    assert float(rows[1]["measured_min_s"]) > 0.95 * lower
    # hockney predicts 7 rounds of alpha + beta m (no contention): 7 x (100 us + 5.49 ms)
    assert float(rows[1]["predicted_s"]) == pytest.approx(7 * (1e-4 + 8.37e-8 * 65536), rel=1e-3)
    with open(out / "messages.csv") as fh:
        msgs = list(csv.DictReader(fh))
    assert len([m for m in msgs if m["model"] == "hockney"]) == 2 * 56
    with open(out / "summary.csv") as fh:
        summ = {(r["model"], r["scope"]): r for r in csv.DictReader(fh)}
    assert summ[("hockney", "messages")]["count"] == "112"
    assert summ[("plogp", "makespans")]["count"] == "0"
    assert "plogp" in run.stdout and "unavailable" in run.stdout
    assert time.monotonic() - t0 < 120


@pytest.mark.cluster
@pytest.mark.mpi
@pytest.mark.skipif(UNAVAILABLE is not None, reason=UNAVAILABLE or "")
def test_validate_killed_midway_leaves_nothing_after_down(tmp_path):
    """SIGKILL `validate` while its ranks run; `cluster down` must still clean everything."""
    import signal

    plat = tmp_path / "nominal.yaml"
    plat.write_text(PLATFORM)
    sched = str(tmp_path / "alltoall-xor-pairwise-1MiB.goal")
    made = _commodel(
        "schedule", "alltoall-xor-pairwise", "--ranks", "8", "--size", "1MiB", "-o", sched
    )
    assert made.returncode == 0, made.stderr
    proc = None
    try:
        up = _commodel("cluster", "up", "--spec", SPEC, "--name", NAME)
        assert up.returncode == 0, up.stderr
        proc = subprocess.Popen(
            [sys.executable, "-m", "commodel", "validate", "--platform", str(plat),
             "--schedules", sched, "--cluster", NAME, "--db", str(tmp_path / "k.duckdb"),
             "--reps", "50", "--models", "hockney", "-o", str(tmp_path / "r")],
            env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        ranks = ""
        while time.monotonic() < deadline and not ranks:
            time.sleep(0.5)
            ranks = subprocess.run(
                ["ip", "netns", "pids", f"cm-{NAME}-h7"], capture_output=True, text=True
            ).stdout.strip()
        assert ranks, "the ranks never started"
        time.sleep(2)  # in the middle of the measurement
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        down = _commodel("cluster", "down", "--name", NAME)
        if proc is not None:
            # what is left of our own process group (the `cluster mpirun` it started), by id
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
    assert down.returncode == 0, down.stderr
    assert "processes stopped" in down.stdout
    assert int(down.stdout.split(" processes stopped")[0].split()[-1]) > 0
    assert _our_namespaces() == []
    assert not os.path.exists(f"/run/commodel/{NAME}.json")
