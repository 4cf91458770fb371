"""``measure check`` under mpirun over loopback TCP (4 ranks on one host: every rank a
node, as ``efficiency`` counts them): the four collectives run, each at least --min-reps
and at most --max-reps times, every makespan stored."""

from __future__ import annotations

import pytest

from mpirun import needs_mpi, run

pytestmark = [pytest.mark.mpi, needs_mpi]

pytest.importorskip("duckdb")


def test_check_runs_every_collective(tmp_path):
    from commodel.db import ResultsDB
    from commodel.measure.check import CHECKS

    db = tmp_path / "r.duckdb"
    res = run(4, "measure", "check", "--db", str(db), "--min-reps", "2", "--max-reps", "3",
              "--budget", "1000", "--quiet")  # fmt: skip
    assert res.returncode == 0, res.stderr
    with ResultsDB(str(db), read_only=True) as results:
        camp = results.campaigns()[-1]
        rows = results.samples(camp.id)
    assert camp.benchmark == "check" and camp.status == "complete"
    seen: dict[tuple[str, int], list[int]] = {}
    for r in rows:
        assert r["quantity"] == "makespan" and r["value_s"] > 0 and r["n_ranks"] == 4
        seen.setdefault((r["pattern"], r["size_bytes"]), []).append(r["repetition"])
    assert sorted(seen) == sorted(CHECKS)
    # a budget never spent: the first batch of --min-reps, then one at a time to --max-reps
    assert all(sorted(reps) == [0, 1, 2] for reps in seen.values()), seen
