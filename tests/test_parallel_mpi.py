"""Sweeps on MPI workers (``--executor mpi``, commodel.parallel): under a real
``mpirun -n N python -m mpi4py.futures -m commodel ...`` over loopback TCP, ``advise`` and
``predict --model all`` print exactly what one process prints, in the same order. No timing
is asserted (docs/benchmarks.md, *Sweeps across machines*, has the speed-ups)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import mpirun

pytestmark = [pytest.mark.mpi, mpirun.needs_mpi]

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
PLATFORM = str(EXAMPLES / "platforms" / "two-rack-8-serial-calibrated.yaml")


def one_process(*args: str) -> str:
    run = subprocess.run(
        [sys.executable, "-m", "commodel", *args, "--jobs", "1"],
        capture_output=True,
        text=True,
        env=mpirun.env(),
        timeout=240,
    )
    assert run.returncode == 0, run.stderr
    return run.stdout


def on_workers(n: int, *args: str) -> str:
    run = mpirun.run(
        n, "-m", "mpi4py.futures", "-m", "commodel", *args, "--executor", "mpi", module=False
    )
    assert run.returncode == 0, run.stderr
    return run.stdout


@pytest.mark.parametrize("ranks", [2, 4])
def test_advise_on_mpi_workers_prints_what_one_process_prints(ranks):
    args = ("advise", "--platform", PLATFORM, "--collective", "allreduce")
    args += ("--ranks", "4,8", "--sizes", "1KiB,16KiB,256KiB")
    want = one_process(*args)
    assert "allreduce" in want and want.count("\n") > 6
    assert on_workers(ranks, *args) == want


def test_predict_all_on_mpi_workers_prints_what_one_process_prints(tmp_path):
    goal = tmp_path / "a2a.goal"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "commodel",
            "schedule",
            "alltoall-basic-linear",
            "-P",
            "8",
            "-m",
            "4KiB",
            "-o",
            str(goal),
        ],
        check=True,
        capture_output=True,
    )
    args = ("predict", str(goal), "--platform", PLATFORM, "--model", "all")
    want = one_process(*args)
    assert "tcpflow" in want
    assert on_workers(3, *args) == want


def test_an_error_on_a_worker_is_the_one_process_error():
    # 16 ranks on a platform of 8 nodes: every prediction fails, and the error reported is
    # that of the first item, as in one process.
    args = (
        "advise",
        "--platform",
        PLATFORM,
        "--collective",
        "bcast",
        "--ranks",
        "16",
        "--sizes",
        "1KiB",
    )
    alone = subprocess.run(
        [sys.executable, "-m", "commodel", *args, "--jobs", "1"],
        capture_output=True,
        text=True,
        env=mpirun.env(),
    )
    workers = mpirun.run(
        3, "-m", "mpi4py.futures", "-m", "commodel", *args, "--executor", "mpi", module=False
    )
    assert alone.returncode == 2
    assert workers.returncode != 0
    assert alone.stderr.strip().splitlines()[-1] in workers.stderr
