"""``measure plogp`` under mpirun over loopback TCP, with small limits.

The machine these run on is shared (2 cores), so timings carry scheduling noise of up to
milliseconds. The campaign uses ``--statistic min`` (noise only adds time) and the
assertions leave room for that noise; each states its tolerance.
"""

from __future__ import annotations

import re
import shutil
import time
import warnings

import pytest

from mpirun import commodel, connect_when_released, kill_group, needs_mpi, run, start

pytestmark = [pytest.mark.mpi, needs_mpi]

duckdb = pytest.importorskip("duckdb")

SMALL = [
    "--max-size", "64KiB", "--k-m", "16", "--eps", "0.05", "--max-reps", "20",
    "--max-reps-large", "6", "--statistic", "min", "--sat-max-n", "256", "--quiet",
]  # fmt: skip


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    """One campaign with the fast and the saturation g(m) and the bidirectional g(m)."""
    db = tmp_path_factory.mktemp("plogp") / "r.duckdb"
    res = run(
        2, "measure", "plogp", "--db", str(db), "--method", "saturation", "--bidirectional", *SMALL
    )
    assert res.returncode == 0, res.stderr
    return db, res


def _fit(db):
    from commodel.db import ResultsDB
    from commodel.fit.plogp import fit_plogp

    with ResultsDB(db, read_only=True) as rdb:
        (camp,) = rdb.campaigns()
        return camp, fit_plogp(rdb.samples(camp.id), camp.options), rdb.phase_times(camp.id)


def test_campaign_is_complete_and_printed(campaign):
    db, res = campaign
    camp, fit, phases = _fit(db)
    assert camp.status == "complete" and camp.ranks == 2 and camp.runs == 1
    assert camp.mpi_library.startswith("Open MPI") or camp.mpi_library
    assert list(phases) == ["g0", "roundtrip", "saturation", "bidirectional"]
    # every initial size 0, 2^0 .. 2^16 was measured (halving may add more)
    assert set([0] + [1 << k for k in range(17)]) <= set(fit.sizes)
    assert max(fit.sizes) == 65536
    for m, reps in zip(fit.sizes, fit.reps):
        cap = 20 if m < 65536 else 6
        assert 5 <= reps <= cap, (m, reps)
    assert "LogP/LogGP (Kielmann Table 1)" in res.stdout
    assert re.search(r"^\s+65536\s+\d+\s", res.stdout, re.M)


def test_fitted_values_are_consistent(campaign):
    db, _ = campaign
    _, fit, _ = _fit(db)
    # L = RTT(0)/2 - g(0). Over loopback there is no wire: RTT(0) is almost all send and
    # receive overhead and g(0) >= o_s(0), so L is a small difference of two noisy values
    # near 0; it must lie within noise of the interval [0, RTT(0)/2] (on a network L > 0
    # by the wire latency). Tolerance: 25% of RTT(0).
    assert -0.25 * fit.rtt0 < fit.L < fit.rtt0 / 2
    assert fit.g0 > 0
    i_big = fit.sizes.index(65536)
    small = sorted(g for m, g in zip(fit.sizes, fit.g_fast) if m <= 1024)
    # g(m) non-decreasing within noise: the largest message is not faster than the median
    # small one
    assert fit.g_fast[i_big] >= small[len(small) // 2]
    # o_s(m) <= g(m) for large m (tolerance 1.5x for scheduling noise)
    assert fit.o_s[i_big] <= 1.5 * fit.g_fast[i_big]
    # fast and saturation g(m) agree within a factor of 4 in the median over the sizes
    # >= 1 KiB (Kielmann saw them up to 50% apart; on this shared machine saturation runs of
    # hundreds of messages absorb scheduling noise; `make bench` reports the measured figure)
    ratios = sorted(f / s for m, f, s in zip(fit.sizes, fit.g_fast, fit.g_saturation) if m >= 1024)
    assert 1 / 4 <= ratios[len(ratios) // 2] <= 4, ratios
    assert len(fit.g_bidirectional) == len(fit.sizes)


def test_fit_reproduces_the_same_platform_file(campaign, tmp_path):
    db, _ = campaign
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    copy = tmp_path / "copy.duckdb"
    shutil.copy(db, copy)
    for out, src in ((a, db), (b, db)):
        res = commodel("fit", "--db", str(src), "-o", str(out))
        assert res.returncode == 0, res.stderr
    assert a.read_bytes() == b.read_bytes()
    res = commodel("fit", "--db", str(copy), "--campaign", "1")
    assert res.returncode == 0, res.stderr
    assert res.stdout.replace("copy.duckdb", "r.duckdb") == a.read_text()
    from commodel.errors import PlatformWarning
    from commodel.platform import load_platform

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PlatformWarning)  # a measured g(m) may fall (noise)
        plat = load_platform(str(a))
    _, fit, _ = _fit(db)
    assert plat.plogp.sizes == tuple(fit.sizes)
    # fit writes g(m) as its non-decreasing, non-negative fit (and lists what it moved)
    from commodel.fit.plogp import monotone_fit

    weights = [float(r) for r in fit.reps]
    assert list(plat.plogp.g) == sorted(plat.plogp.g) and min(plat.plogp.g) >= 0
    assert plat.plogp.g == pytest.approx(monotone_fit(fit.g_saturation, weights), rel=1e-5)
    assert plat.plogp.bidirectional.g == pytest.approx(
        monotone_fit(fit.g_bidirectional, weights), rel=1e-5, abs=1e-11
    )
    assert plat.nodes == 2
    # measured with Open MPI: from 64 KiB a message goes by rendezvous
    assert plat.plogp.S == 65535
    assert "S = 65535: Open MPI's TCP eager limit" in a.read_text()


def test_db_list_and_plot(campaign, tmp_path):
    db, _ = campaign
    res = commodel("db", "list", "--db", str(db))
    assert res.returncode == 0, res.stderr
    assert re.search(r"^\s+1\s+plogp\s+complete\s+2\s+1\s+\d+", res.stdout, re.M)
    pytest.importorskip("matplotlib")
    res = commodel("plot", "--db", str(db), "-o", str(tmp_path))
    assert res.returncode == 0, res.stderr
    png = tmp_path / "campaign1-plogp.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_sigkill_and_resume_store_every_sample_once(tmp_path):
    db = tmp_path / "r.duckdb"
    # eps so small that every size runs to its repetition cap: long enough to be killed
    args = ["measure", "plogp", "--db", str(db), "--max-size", "2KiB", "--k-m", "11",
            "--eps", "0.0001", "--max-reps", "40", "--max-reps-large", "10", "--quiet",
            "--sat-max-n", "160"]  # fmt: skip
    proc = start(2, *args)
    # kill once a few steps are in the write-ahead log (the database is locked while the
    # campaign runs, so its size is what can be watched)
    wal = db.parent / (db.name + ".wal")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if wal.exists() and wal.stat().st_size > 30000:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the campaign finished before it could be killed"
    kill_group(proc)
    with connect_when_released(db) as con:  # read-write: replays the write-ahead log
        status, runs = con.execute("SELECT status, runs FROM campaigns").fetchone()
        (before,) = con.execute("SELECT count(*) FROM samples").fetchone()
    assert status == "running" and runs == 1 and before > 0

    res = run(2, *args, "--resume")
    assert res.returncode == 0, res.stderr
    m = re.search(r"(\d+) steps measured, (\d+) replayed", res.stdout)
    assert m and int(m.group(1)) > 0 and int(m.group(2)) > 0, res.stdout
    with duckdb.connect(str(db), read_only=True) as con:
        status, runs = con.execute("SELECT status, runs FROM campaigns").fetchone()
        assert (status, runs) == ("complete", 2)
        dup = con.execute(
            "SELECT step, quantity, repetition, count(*) FROM samples "
            "GROUP BY ALL HAVING count(*) > 1"
        ).fetchall()
        assert dup == []
        # repetitions of every roundtrip size and quantity are exactly 0..n-1
        gaps = con.execute(
            "SELECT size_bytes, quantity, count(*), max(repetition) FROM samples "
            "WHERE phase = 'roundtrip' GROUP BY ALL HAVING count(*) != max(repetition) + 1"
        ).fetchall()
        assert gaps == []
        per_q = con.execute(
            "SELECT size_bytes, count(DISTINCT n) FROM (SELECT size_bytes, quantity, count(*) AS n "
            "FROM samples WHERE phase = 'roundtrip' GROUP BY ALL) GROUP BY ALL HAVING count(DISTINCT n) > 1"
        ).fetchall()
        assert per_q == []
        (after,) = con.execute("SELECT count(*) FROM samples").fetchone()
    assert after > before

    # a resume with other options is refused, naming the option
    res = run(2, *[a if a != "0.0001" else "0.2" for a in args], "--resume", "1")
    assert res.returncode == 2
    assert "eps: stored 0.0001, given 0.2" in res.stderr


def test_one_rank_is_a_clear_error(tmp_path):
    res = run(1, "measure", "plogp", "--db", str(tmp_path / "r.duckdb"), "--quiet")
    assert res.returncode == 2
    assert "needs at least 2 MPI ranks, got 1" in res.stderr
    assert "Traceback" not in res.stderr


def test_four_ranks_idle_ranks_follow(tmp_path):
    db = tmp_path / "r.duckdb"
    res = run(4, "measure", "plogp", "--db", str(db), "--max-size", "1KiB", "--k-m", "10",
              "--eps", "0.2", "--max-reps", "5", "--mode", "isend", "--quiet")  # fmt: skip
    assert res.returncode == 0, res.stderr
    _, fit, _ = _fit(db)
    assert fit.mode == "isend" and fit.sizes[:3] == [0, 1, 2] and max(fit.sizes) == 1024
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT ranks FROM campaigns").fetchone() == (4,)


def test_given_sizes_are_measured_exactly(tmp_path):
    # with --sizes the campaign measures 0 and the given sizes, no adaptive extension or
    # halving, and saturates each of them
    db = tmp_path / "r.duckdb"
    res = run(2, "measure", "plogp", "--db", str(db), "--sizes", "4KiB,1KiB,4096,100",
              "--method", "saturation", "--eps", "0.2", "--max-reps", "5", "--sat-max-n", "64",
              "--quiet")  # fmt: skip
    assert res.returncode == 0, res.stderr
    camp, fit, phases = _fit(db)
    assert fit.sizes == [0, 100, 1024, 4096]
    assert camp.options["sizes"] == [100, 1024, 4096]
    assert list(phases) == ["g0", "roundtrip", "saturation"]
    assert all(g > 0 for g in fit.g_saturation[1:])
    bad = run(2, "measure", "plogp", "--db", str(tmp_path / "b.duckdb"), "--sizes", "0,1KiB")
    assert bad.returncode == 2 and "--sizes must be message sizes of at least 1 byte" in bad.stderr


def test_budget_stops_the_halving(tmp_path):
    # a budget already spent when the halving starts: the sizes are 0 and powers of two
    # only (the extension of k_m adds powers of two too); a negative budget is refused
    db = tmp_path / "r.duckdb"
    res = run(2, "measure", "plogp", "--db", str(db), "--max-size", "64KiB", "--k-m", "16",
              "--max-reps", "5", "--budget", "0.000001", "--quiet")  # fmt: skip
    assert res.returncode == 0, res.stderr
    _, fit, _ = _fit(db)
    assert all(m == 0 or m & (m - 1) == 0 for m in fit.sizes), fit.sizes
    bad = run(2, "measure", "plogp", "--db", str(tmp_path / "b.duckdb"), "--budget", "-1")
    assert bad.returncode == 2 and "--budget must be seconds >= 0" in bad.stderr
