"""``measure pattern``: a GOAL schedule executed for real under mpirun."""

from __future__ import annotations

import json

import pytest

from mpirun import needs_mpi, run

pytestmark = [pytest.mark.mpi, needs_mpi]

duckdb = pytest.importorskip("duckdb")


def _engine_has_rank_ops() -> bool:
    try:
        from commodel import _engine
    except ImportError:
        return False
    return hasattr(_engine.Schedule, "rank_ops")


needs_rank_ops = pytest.mark.skipif(
    not _engine_has_rank_ops(),
    reason="the engine bindings predate Schedule.rank_ops(): rebuild them with `make install`",
)

CHAIN = """num_ranks 3
rank 0 {
s1: send 4096b to 1 tag 5
c1: calc 200000
s2: send 100b to 2 tag 6
s2 requires c1
c1 requires s1
}
rank 1 {
r1: recv 4096b from 0 tag 5
s1: send 4096b to 2 tag 7
s1 requires r1
}
rank 2 {
r1: recv 4096b from -1 tag 7
r2: recv 100b from 0 tag -1
r2 irequires r1
}
"""


@needs_rank_ops
def test_pattern_runs_in_dependency_order(tmp_path):
    goal = tmp_path / "chain.goal"
    goal.write_text(CHAIN)
    db = tmp_path / "r.duckdb"
    res = run(3, "measure", "pattern", str(goal), "--db", str(db), "--max-reps", "8", "--quiet")
    assert res.returncode == 0, res.stderr
    assert "chain.goal: makespan mean" in res.stdout
    with duckdb.connect(str(db), read_only=True) as con:
        spans = [
            r[0]
            for r in con.execute(
                "SELECT value_s FROM samples WHERE quantity = 'makespan' ORDER BY repetition"
            ).fetchall()
        ]
        ops = con.execute(
            "SELECT repetition, CAST(json_extract(extra, '$.rank') AS INT), "
            "json_extract_string(extra, '$.label'), CAST(json_extract(extra, '$.start_s') AS DOUBLE), "
            "value_s FROM samples WHERE quantity != 'makespan'"
        ).fetchall()  # fmt: skip
    assert 5 <= len(spans) <= 8
    assert len(ops) == 7 * len(spans)
    t = {(rep, rank, label): (start, end) for rep, rank, label, start, end in ops}
    for rep in range(len(spans)):
        # calc c1 of 200 us after s1 finished; s2 after c1 finished
        assert t[(rep, 0, "c1")][0] >= t[(rep, 0, "s1")][1]
        assert t[(rep, 0, "c1")][1] - t[(rep, 0, "c1")][0] >= 200e-6
        assert t[(rep, 0, "s2")][0] >= t[(rep, 0, "c1")][1]
        assert t[(rep, 1, "s1")][0] >= t[(rep, 1, "r1")][1]
        assert t[(rep, 2, "r2")][0] >= t[(rep, 2, "r1")][0]  # irequires: after r1 started
        # the makespan is the latest finish of any rank, and at least the 200 us calc
        assert spans[rep] == pytest.approx(max(e for (r, _, _), (_, e) in t.items() if r == rep))
        assert spans[rep] >= 200e-6
    # with every makespan, the machine's load: one host (loopback), the ranks' CPU time at
    # least the 200 us that rank 0 busy-waits in c1, no rank waiting for a CPU longer than the
    # repetition took; host shares in [0, 1] where the repetition spanned enough clock ticks
    with duckdb.connect(str(db), read_only=True) as con:
        loads = [
            json.loads(r[0])
            for r in con.execute(
                "SELECT extra FROM samples WHERE quantity = 'makespan' ORDER BY repetition"
            ).fetchall()
        ]
    assert len(loads) == len(spans)
    for span, load in zip(spans, loads):
        assert load["hosts"] == 1.0
        assert load["ranks_cpu_s"] >= 200e-6
        assert 0.0 <= load["rank_wait_max_s"] <= span + 0.05  # + the start barrier's wait
        assert load["load1"] >= 0.0
        if "host_busy" in load:
            assert 0.0 <= load["host_softirq"] <= load["host_busy"] <= 1.0


@needs_rank_ops
def test_schedule_that_cannot_finish_names_the_stuck_operation(tmp_path):
    goal = tmp_path / "stuck.goal"
    goal.write_text("num_ranks 2\nrank 0 {\nwaiting: recv 8b from 1 tag 3\n}\nrank 1 {\n}\n")
    res = run(2, "measure", "pattern", str(goal), "--db", str(tmp_path / "r.duckdb"),
              "--timeout", "1", "--quiet")  # fmt: skip
    assert res.returncode == 2
    assert "rank 0: operations ['waiting'] did not finish within 1.0 s" in res.stderr


def test_bad_goal_and_wrong_rank_count_are_reported_once(tmp_path):
    bad = tmp_path / "bad.goal"
    bad.write_text("num_ranks 2\nrank 0 {\nr1: rcv 8b from 1\n}\n")
    res = run(2, "measure", "pattern", str(bad), "--db", str(tmp_path / "r.duckdb"), "--quiet")
    assert res.returncode == 2
    assert res.stderr.count("commodel: error:") == 1
    assert "bad.goal:3:" in res.stderr and "Traceback" not in res.stderr
    good = tmp_path / "two.goal"
    good.write_text("num_ranks 2\nrank 0 {\n}\nrank 1 {\n}\n")
    res = run(3, "measure", "pattern", str(good), "--db", str(tmp_path / "r.duckdb"), "--quiet")
    assert res.returncode == 2
    assert "the schedule has 2 ranks but mpirun started 3" in res.stderr
