"""``measure many-to-one`` / ``one-to-many`` under mpirun (4 ranks), then fit and plot."""

from __future__ import annotations

import pytest

from mpirun import commodel, needs_mpi, run

pytestmark = [pytest.mark.mpi, needs_mpi]

duckdb = pytest.importorskip("duckdb")


def test_sweeps_fit_and_plot(tmp_path):
    db = tmp_path / "r.duckdb"
    for direction in ("many-to-one", "one-to-many"):
        res = run(4, "measure", direction, "--db", str(db), "--reps", "8",
                  "--sizes", "1KiB,32KiB,128KiB", "--quiet")  # fmt: skip
        assert res.returncode == 0, res.stderr
        assert f": {direction}" in res.stdout
    with duckdb.connect(str(db), read_only=True) as con:
        counts = con.execute(
            "SELECT phase, n_ranks, size_bytes, count(*) FROM samples GROUP BY ALL ORDER BY ALL"
        ).fetchall()
    assert len(counts) == 2 * 2 * 3 and all(c[3] == 8 for c in counts)
    res = commodel("fit", "--db", str(db))
    assert res.returncode == 0, res.stderr
    import yaml

    doc = yaml.safe_load(res.stdout)
    sec = doc["many_to_one"]
    assert sec["n"] == [3, 4] and sec["sizes"] == [1024, 32768, 131072]
    # a gather of more bytes takes longer. Not the intercept: the line through the normal
    # times has a negative one where they rise faster than linearly, as past the eager
    # limit over loopback (11, 16, 162 us at 1, 32, 128 KiB for 2 senders) and on every
    # cluster platform in study
    lines = zip(sec["linear"]["intercept"], sec["linear"]["slope"])
    assert all(b > 0 and a + b * 131072 > 0 for a, b in lines)
    assert len(sec["probability"]) == len(sec["levels"])
    assert sec["receives"] == "sequential"  # the default: as Open MPI's linear gather
    assert sec["one_to_many"]["n"] == [3, 4]
    assert all(t > 0 for row in sec["one_to_many"]["time"] for t in row)
    pytest.importorskip("matplotlib")
    res = commodel("plot", "--db", str(db), "-o", str(tmp_path / "plots"))
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "plots" / "campaign1-many-to-one.png").exists()


def test_posted_receives_are_recorded_and_refused_for_one_to_many(tmp_path):
    db = tmp_path / "p.duckdb"
    res = run(3, "measure", "many-to-one", "--db", str(db), "--reps", "3", "--sizes", "1KiB",
              "--receives", "posted", "--quiet")  # fmt: skip
    assert res.returncode == 0, res.stderr
    with duckdb.connect(str(db), read_only=True) as con:
        (opts,) = con.execute("SELECT options FROM campaigns").fetchone()
        (count,) = con.execute("SELECT count(*) FROM samples").fetchone()
    assert '"receives":"posted"' in opts.replace(" ", "") and count == 3
    res = commodel("fit", "--db", str(db))
    assert res.returncode == 0, res.stderr
    import yaml

    assert yaml.safe_load(res.stdout)["many_to_one"]["receives"] == "posted"
    res = commodel("measure", "one-to-many", "--db", str(tmp_path / "q.duckdb"),
                   "--receives", "posted")  # fmt: skip
    assert res.returncode == 2 and "unrecognized arguments: --receives" in res.stderr


def test_ranks_beyond_n_sit_the_flat_tree_out():
    # the kernel's sit-out rule (the 4-rank sweep above goes through it at n = 3): ranks
    # 0..n-1 take part, in their own communicator, the others wait
    from types import SimpleNamespace

    from commodel.measure import manytoone
    from commodel.measure.common import KERNELS

    rule = KERNELS["m2o.flat"].sits_out
    assert rule is manytoone._sits_out
    assert [rule(SimpleNamespace(rank=r), {"n": 3}) for r in range(5)] == [
        False, False, False, True, True,
    ]  # fmt: skip
