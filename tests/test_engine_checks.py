"""Nothing silently wrong in the engine, seen from Python and the CLI: overflowing times and
truncated messages are errors naming the operations; per-byte costs keep their fraction."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from commodel import parse_goal, predict
from commodel.errors import ModelError, ScheduleError
from commodel.platform import platform_from_dict

GIB = 1 << 30


def pair(send: int, recv: int) -> str:
    return (
        f"num_ranks 2\nrank 0 {{\na: send {send}b to 1 tag 3\n}}\n"
        f"rank 1 {{\nb: recv {recv}b from 0 tag 3\n}}\n"
    )


def platform(G: float = 8e-9, beta: float = 8.5e-9) -> Any:
    return platform_from_dict(
        {
            "commodel_platform": 1,
            "name": "checks",
            "nodes": 2,
            "loggops": {"L": 0.0, "o": 0.0, "g": 0.0, "G": G, "O": 0.0, "S": None},
            "plogp": {
                "L": 5e-5,
                "sizes": [0, 1024],
                "o_s": [2e-6, 4e-6],
                "o_r": [2e-6, 5e-6],
                "g": [5e-6, 1.2e-5],
                "S": None,
            },
            "hockney": {"alpha": 0.0, "beta": beta},
        }
    )


@pytest.mark.parametrize("model", ["loggops", "plogp", "hockney"])
def test_overflowing_time_is_a_model_error_naming_the_send(model: str) -> None:
    schedule = parse_goal(pair(2**64 - 1, 2**64 - 1), "huge.goal")
    with pytest.raises(ModelError) as err:
        predict(schedule, platform(), model=model)
    assert str(err.value) == (
        "simulated time out of range (0 to 2^64 ps, 213 days) at rank 0 a (send to 1 tag 3)"
    )


@pytest.mark.parametrize("model", ["loggops", "plogp", "hockney"])
def test_truncation_is_a_schedule_error_naming_both(model: str) -> None:
    with pytest.raises(ScheduleError) as err:
        predict(parse_goal(pair(16, 8)), platform(), model=model)
    assert str(err.value) == (
        "message truncated: rank 0 a (send to 1 tag 3) sends 16 B, "
        "but rank 1 b (recv from 0 tag 3) receives 8 B"
    )
    bigger = predict(parse_goal(pair(16, 32)), platform(), model=model)
    assert (
        bigger.makespan_ps == predict(parse_goal(pair(16, 16)), platform(), model=model).makespan_ps
    )


@pytest.mark.parametrize(
    ("seconds_per_byte", "loggops_ps", "hockney_ps"),
    [
        # loggops: (2^30 - 1) G; hockney: 2^30 beta; rounded to the nearest picosecond once.
        (0.4e-12, 429_496_729, 429_496_730),
        (1.4e-12, 1_503_238_552, 1_503_238_554),
        (20e-12, 20 * (GIB - 1), 20 * GIB),
    ],
)
def test_per_byte_costs_below_a_picosecond_survive(
    seconds_per_byte: float, loggops_ps: int, hockney_ps: int
) -> None:
    plat = platform(G=seconds_per_byte, beta=seconds_per_byte)
    schedule = parse_goal(pair(GIB, GIB))
    assert predict(schedule, plat, model="loggops").makespan_ps == loggops_ps
    assert predict(schedule, plat, model="hockney").makespan_ps == hockney_ps


def test_cli_reports_truncation_and_exits_2(tmp_path: Path) -> None:
    goal = tmp_path / "t.goal"
    goal.write_text(pair(16, 8))
    done = subprocess.run(
        [sys.executable, "-m", "commodel", "predict", str(goal), "-p", "loggopsim-default"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("commodel: error: message truncated: rank 0 a"), done.stderr
