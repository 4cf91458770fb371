"""``commodel study`` on one small draw (root; a few minutes): the whole held-out pipeline,
from the drawn spec to the report, on a real emulated cluster with the quick workload."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from test_validate_cluster import UNAVAILABLE, _commodel

SEED = 250  # draw 0: 4 hosts, 75 Mbit/s NICs, racks [1, 1, 1, 1], 61 Mbit/s uplinks, tbf


@pytest.mark.cluster
@pytest.mark.mpi
@pytest.mark.slow
@pytest.mark.skipif(UNAVAILABLE is not None, reason=UNAVAILABLE or "")
def test_study_measures_scores_and_reports_one_draw(tmp_path):
    out = str(tmp_path / "study")
    run = _commodel(
        "study", "run", "--seed", str(SEED), "--count", "1", "--role", "dev",
        "--workload", "quick", "-o", out, timeout=1500,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:] + run.stdout[-2000:]
    record = json.loads(Path(out, "study.json").read_text())
    assert (record["seed"], record["role"], record["draws"]) == (SEED, "dev", [0])
    assert not record.get("failures")
    draw = os.path.join(out, f"rs{SEED}x0")
    measured = json.loads(Path(draw, "measured.json").read_text())
    assert measured["complete"] and measured["hosts"] == 4
    assert measured["elapsed_s"]["calibrate"] > 0
    # calibrate wrote a network every contention model can use, and the flows' spread
    from commodel.platform import load_platform

    plat = load_platform(os.path.join(draw, "platform.yaml"))
    assert plat.network.topology in ("crossbar", "racks")
    assert plat.tcp.spread is not None and 0 < plat.tcp.spread < 1
    score = json.loads(Path(draw, "score.json").read_text())
    assert "tcpflow" in score["models"] and not score["unavailable"].get("tcpflow")
    # alltoall A and B at 16 and 64 KiB, one random pattern: each measured and predicted
    assert len(score["schedules"]) == 5
    for row in score["schedules"]:
        pred = row["models"]["tcpflow"]
        assert row["measured_s"] > 0 and pred["makespan_s"] > 0
        assert pred["low_s"] <= pred["high_s"]
    assert score["forced"] and all(r["size"] == 32 * 1024 for r in score["forced"])
    readme = Path(out, "README.md").read_text()
    assert "## Targets" in readme and "calibrate under 180 s" in readme
    assert "role **dev**" in readme
    # the draw's cluster is down
    status = _commodel("cluster", "status", "--name", f"s{SEED}d0")
    assert status.returncode != 0
