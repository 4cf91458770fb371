"""The results database: schema, steps written whole, resume bookkeeping, export."""

from __future__ import annotations

import pytest

duckdb = pytest.importorskip("duckdb")

from commodel.db import ResultsDB  # noqa: E402
from commodel.errors import CommodelError  # noqa: E402


def _rows(n: int, size: int = 8) -> list[dict]:
    return [
        {
            "step": f"roundtrip/uni/m={size}/b=0",
            "benchmark": "plogp",
            "phase": "roundtrip",
            "pattern": "uni",
            "quantity": "rtt",
            "size_bytes": size,
            "repetition": i,
            "value_s": 1e-5 * (i + 1),
            "src": 0,
            "dst": 1,
            "hosts": "a,b",
            "extra": {"mode": "send"},
        }
        for i in range(n)
    ]


def test_campaign_roundtrip(tmp_path):
    path = tmp_path / "r.duckdb"
    with ResultsDB(path) as db:
        cid = db.create_campaign(
            "plogp",
            "commodel measure plogp",
            {"eps": 0.1, "a": 1},
            ["h0", "h1"],
            "Open MPI v4.1.4",
            "3.1",
        )
        assert cid == 1
        db.write_step(cid, _rows(3))
        db.write_step(cid, _rows(2, size=16))
        db.add_phase_time(cid, 1, "g0", 0.5)
        db.add_phase_time(cid, 1, "roundtrip", 2.0)
        db.add_phase_time(cid, 2, "roundtrip", 1.0)
    with ResultsDB(path, read_only=True) as db:
        (c,) = db.campaigns()
        assert (c.benchmark, c.ranks, c.status, c.runs) == ("plogp", 2, "running", 1)
        assert c.options == {"a": 1, "eps": 0.1}
        assert c.hosts == ["h0", "h1"]
        samples = db.samples(cid)
        assert [s["seq"] for s in samples] == [1, 2, 3, 4, 5]
        assert [s["value_s"] for s in samples[:3]] == pytest.approx([1e-5, 2e-5, 3e-5], rel=1e-15)
        assert samples[0]["extra"] == {"mode": "send"}
        steps = db.stored_steps(cid)
        assert sorted(steps) == ["roundtrip/uni/m=16/b=0", "roundtrip/uni/m=8/b=0"]
        assert [r["repetition"] for r in steps["roundtrip/uni/m=16/b=0"]] == [0, 1]
        assert db.phase_times(cid) == {"g0": 0.5, "roundtrip": 3.0}


def test_resume_bookkeeping(tmp_path):
    path = tmp_path / "r.duckdb"
    with ResultsDB(path) as db:
        a = db.create_campaign("plogp", "x", {}, ["h"] * 2, "lib", "3.1")
        b = db.create_campaign("tree", "x", {}, ["h"] * 4, "lib", "3.1")
        db.set_status(a, "failed")
        assert db.resumable("plogp", None).id == a
        assert db.restart_campaign(a) == 2
        assert db.campaign(a).status == "running"
        db.set_status(a, "complete")
        assert db.campaign(a).finished is not None
        with pytest.raises(CommodelError, match="no unfinished 'plogp' campaign"):
            db.resumable("plogp", None)
        with pytest.raises(CommodelError, match="campaign 2 measured 'tree'"):
            db.resumable("plogp", b)
        with pytest.raises(CommodelError, match="no campaign 7"):
            db.campaign(7)


def test_new_connection_sees_committed_steps_only(tmp_path):
    """A step is one statement: after a failed insert nothing of it is stored."""
    path = tmp_path / "r.duckdb"
    with ResultsDB(path) as db:
        cid = db.create_campaign("plogp", "x", {}, ["h", "h"], "lib", "3.1")
        db.write_step(cid, _rows(2))
        bad = _rows(3, size=32)
        bad[2]["value_s"] = None  # NOT NULL violation in the last row
        with pytest.raises(TypeError):
            db.write_step(cid, bad)
        bad[2]["value_s"] = "not a number"
        with pytest.raises(ValueError):
            db.write_step(cid, bad)
        assert db.count_samples(cid) == 2


def test_export_parquet_and_csv(tmp_path):
    path = tmp_path / "r.duckdb"
    with ResultsDB(path) as db:
        cid = db.create_campaign("plogp", "x", {"eps": 0.1}, ["h", "h"], "lib", "3.1")
        db.write_step(cid, _rows(4))
        files = db.export(tmp_path / "pq", "parquet")
        csvs = db.export(tmp_path / "csv", "csv")
    assert [p.rsplit("/", 1)[1] for p in files] == [
        "campaigns.parquet",
        "samples.parquet",
        "phase_times.parquet",
    ]
    con = duckdb.connect()
    n, total = con.execute(f"SELECT count(*), sum(value_s) FROM '{files[1]}'").fetchone()
    assert n == 4 and total == pytest.approx(1e-4)
    with open(csvs[1]) as handle:
        header = handle.readline().strip().split(",")
    assert header[:4] == ["campaign", "seq", "step", "benchmark"]
    with ResultsDB(path) as db, pytest.raises(CommodelError, match="'parquet' or 'csv'"):
        db.export(tmp_path / "x", "xlsx")


def test_errors_name_the_file(tmp_path):
    with pytest.raises(CommodelError, match="no such results database"):
        ResultsDB(tmp_path / "missing.duckdb", read_only=True)
    other = tmp_path / "other.duckdb"
    con = duckdb.connect(str(other))
    con.execute("CREATE TABLE x (a INT)")
    con.close()
    with pytest.raises(CommodelError, match="not a commodel results database"):
        ResultsDB(other, read_only=True)


def test_read_only_sees_steps_of_a_killed_writer(tmp_path):
    """A writer killed before DuckDB checkpointed leaves its steps in the write-ahead log;
    `db list` and `fit` (read-only) still see them."""
    import subprocess
    import sys

    path = tmp_path / "r.duckdb"
    code = (
        "import os, sys\n"
        "from commodel.db import ResultsDB\n"
        f"db = ResultsDB({str(path)!r})\n"
        "c = db.create_campaign('plogp', 'x', {}, ['h', 'h'], 'lib', '3.1')\n"
        "db.write_step(c, [{'step': 's', 'benchmark': 'plogp', 'phase': 'p', 'quantity': 'q',"
        " 'value_s': 1.5}])\n"
        "os._exit(0)  # no close, no checkpoint: as if killed\n"
    )
    import commodel

    env = {"PYTHONPATH": str(__import__("pathlib").Path(commodel.__file__).parent.parent)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    assert (tmp_path / "r.duckdb.wal").exists()
    with ResultsDB(path, read_only=True) as db:
        (camp,) = db.campaigns()
        assert camp.status == "running"
        assert [s["value_s"] for s in db.samples(camp.id)] == [1.5]


def test_a_database_with_only_meta_is_refused(tmp_path, cli):
    """The schema version alone does not make a results database: `fit` and `db export`
    name the table missing (they failed on their first query of `campaigns`)."""
    path = tmp_path / "meta-only.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
    con.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    con.close()
    for args in (
        ("fit", "--db", str(path)),
        ("db", "export", "--db", str(path), "--csv", str(tmp_path / "out")),
    ):
        result = cli(*args)
        assert result.code == 2, result.err
        assert f"{path}: not a complete commodel results database: no table 'campaigns'" in (
            result.err
        )


def test_a_column_of_another_type_is_refused(tmp_path):
    path = tmp_path / "r.duckdb"
    ResultsDB(path).close()
    con = duckdb.connect(str(path))
    con.execute("ALTER TABLE samples ALTER value_s TYPE VARCHAR")
    con.close()
    with pytest.raises(CommodelError) as info:
        ResultsDB(path, read_only=True)
    assert str(info.value) == (
        f"{path}: table 'samples': column 'value_s' is of type VARCHAR, expected DOUBLE"
    )


def test_samples_measure_does_not_write_are_a_clear_error(tmp_path, cli):
    """Found by fuzz/harness.py (results-db): an lmo campaign marked complete whose samples
    lack the `extra` field `measure lmo` writes ended in a TypeError inside fit/lmo.py."""
    path = tmp_path / "r.duckdb"
    with ResultsDB(path) as db:
        cid = db.create_campaign("lmo", "fuzz", {}, ["h0", "h1", "h2"], "Open MPI", "4.1.4")
        rows = _rows(3)
        for row in rows:
            row.update(benchmark="lmo", phase="lmo", extra=None)
        db.write_step(cid, rows)
        db.set_status(cid, "complete")
    result = cli("fit", "--db", str(path))
    assert result.code == 2
    assert f"{path}: campaign 1 (lmo): its samples are not what `commodel measure lmo` writes " in (
        result.err
    )
    assert "(TypeError: 'NoneType' object is not subscriptable in lmo.py:" in result.err


def test_a_database_on_an_open_connection_is_checked_the_same_and_left_open() -> None:
    """ResultsDB over a connection already open (the fuzzer's in-memory databases, one
    connection for many): created and checked as a file is, named by its label, and the
    connection stays open when it is closed."""
    con = duckdb.connect(":memory:")
    con.execute("ATTACH ':memory:' AS one")
    con.execute("USE one")
    with ResultsDB("one.duckdb", con=con) as db:
        cid = db.create_campaign("plogp", "t", {}, ["a", "b"], "Open MPI", "4.1.4")
        db.write_step(cid, _rows(3))
    with ResultsDB("one.duckdb", read_only=True, con=con) as db:
        assert [c.id for c in db.campaigns()] == [cid]
        assert db.count_samples(cid) == 3
    con.execute("ALTER TABLE samples ALTER value_s TYPE VARCHAR")
    with pytest.raises(CommodelError) as info:
        ResultsDB("one.duckdb", read_only=True, con=con)
    assert str(info.value) == (
        "one.duckdb: table 'samples': column 'value_s' is of type VARCHAR, expected DOUBLE"
    )
    con.execute("ATTACH ':memory:' AS two")  # a database without a table: refused, named
    con.execute("USE two")
    with pytest.raises(CommodelError, match=r"^two\.duckdb: not a commodel results database"):
        ResultsDB("two.duckdb", read_only=True, con=con)
    assert con.execute("SELECT 1").fetchone() == (1,)  # still open
    con.close()


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_a_sample_that_is_not_a_finite_number_is_named(tmp_path, cli, value):
    """Found by fuzz/harness.py (results-db-memory, seeds 7,000,068 and 7,000,297): a
    many-to-one campaign with one NaN time went through the fit into a NaN intercept, and
    `commodel fit` ended in an internal error writing it."""
    path = tmp_path / "r.duckdb"
    with ResultsDB(path) as db:
        cid = db.create_campaign("many-to-one", "fuzz", {}, ["h0", "h1", "h2"], "Open MPI", "4.1.4")
        rows = [
            {"step": f"many-to-one/flat/m={m}/r={r}", "benchmark": "many-to-one",
             "phase": "many-to-one", "pattern": "flat", "quantity": "time", "size_bytes": m,
             "n_ranks": 3, "n_msgs": 1, "repetition": r, "value_s": 1e-5 + m * 1e-9 + r * 1e-7}
            for m in (0, 1024, 65536) for r in range(3)
        ]  # fmt: skip
        rows[4]["value_s"] = value
        db.write_step(cid, rows)
        db.set_status(cid, "complete")
    result = cli("fit", "--db", str(path))
    assert result.code == 2, result.err
    assert (
        f"{path}: campaign 1, sample 5 (step 'many-to-one/flat/m=1024/r=1', time): value_s is "
        f"{value!r}; a measured value is a finite number"
    ) in result.err
    assert "internal error" not in result.err


def test_a_fitted_value_no_platform_may_hold_is_named_not_written() -> None:
    """The last guard of `fit`: what it would write loads as `predict` loads it, or the
    error names the field."""
    from commodel.fit.assemble import _check_fitted

    doc = {
        "commodel_platform": 1,
        "name": "x",
        "nodes": 2,
        "loggops": {"L": 1e-6, "o": float("nan"), "g": 1e-6, "G": 1e-9, "O": 0.0, "S": 65535},
    }
    with pytest.raises(CommodelError) as info:
        _check_fitted(doc, "cal.duckdb")
    assert str(info.value).startswith("the platform fitted from cal.duckdb: loggops.o: ")
    assert str(info.value).endswith(": the campaigns' samples do not determine it; measure again")
    doc["loggops"]["o"] = 2e-6
    _check_fitted(doc, "cal.duckdb")  # a valid one passes
