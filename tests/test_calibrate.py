"""``commodel calibrate``: the plan of parts (no MPI), and a real calibration under mpirun
over loopback TCP with reuse and resume of its campaigns."""

from __future__ import annotations

from pathlib import Path

import pytest

from commodel.errors import CommodelError
from commodel.measure import calibrate, tcp
from mpirun import commodel as commodel_cmd
from mpirun import needs_mpi, run

ROOT = Path(__file__).resolve().parent.parent


class _Camp:
    def __init__(self, id, benchmark, ranks, options, status):
        self.id, self.benchmark, self.ranks = id, benchmark, ranks
        self.options, self.status = options, status


def test_decide_reuses_resumes_skips_and_measures():
    table = calibrate.parts(1 << 20)
    chosen = [table[n] for n in ("tcp", "plogp", "tree", "lmo")]
    camps = [
        _Camp(1, "tcp", 6, dict(table["tcp"].options), "complete"),
        _Camp(2, "plogp", 6, dict(table["plogp"].options), "complete"),
        _Camp(3, "plogp", 6, dict(table["plogp"].options), "failed"),  # latest: resume it
        _Camp(4, "lmo", 6, {**table["lmo"].options, "reps": 99}, "complete"),  # other options
    ]
    got = calibrate.decide(camps, chosen, ranks=6, fresh=False)
    assert [(d.part, d.action, d.campaign) for d in got] == [
        ("tcp", "reuse", 1),
        ("plogp", "resume", 3),
        ("tree", "skip", None),  # 6 is not a power of two
        ("lmo", "new", None),
    ]
    assert got[2].why == "needs a power of two ranks"
    fresh = calibrate.decide(camps, chosen, ranks=6, fresh=True)
    assert [d.action for d in fresh] == ["new", "new", "skip", "new"]
    # another rank count never reuses a campaign
    assert [d.action for d in calibrate.decide(camps, chosen[:2], ranks=2, fresh=False)] == [
        "new",
        "new",
    ]
    two = calibrate.decide([], [table["lmo"], table["many-to-one"]], ranks=2, fresh=False)
    assert [d.why for d in two] == ["needs at least 3 ranks"] * 2


def test_parse_parts_names_the_unknown_part():
    assert calibrate.parse_parts("tcp, plogp") == ["tcp", "plogp"]
    with pytest.raises(CommodelError, match="unknown part.*gather.*choose from tcp"):
        calibrate.parse_parts("tcp,gather")


def test_route_rto_min_takes_the_largest_with_units():
    routes = (
        "198.18.0.0/24 dev cm0 proto kernel scope link src 198.18.0.1 rto_min 50ms\n"
        "default via 198.18.0.254 dev cm0 rto_min 0.3s\n"
        "198.19.0.0/24 dev cm1 rto_min 2000us\n"
    )
    assert tcp.route_rto_min_s(routes) == pytest.approx(0.3)
    assert tcp.route_rto_min_s("198.18.0.0/24 dev cm0 scope link\n") is None
    assert tcp.route_rto_min_s("x rto_min 20\n") == pytest.approx(0.020)  # ip's default: ms


@pytest.mark.mpi
@needs_mpi
def test_calibrate_fits_a_complete_platform_and_continues(tmp_path):
    from commodel.db import ResultsDB
    from commodel.platform import load_platform

    db, out = tmp_path / "cal.duckdb", tmp_path / "platform.yaml"
    first = ["calibrate", "--db", str(db), "--max-size", "4KiB", "--parts", "tcp,plogp,tree"]
    res = run(4, *first, "-o", str(out), timeout=600)
    assert res.returncode == 0, res.stderr
    assert "calibrate [3/3] tree: measuring" in res.stderr
    platform = load_platform(str(out))
    host = tcp.host_settings()
    assert platform.tcp.rto == pytest.approx(host["rto_min_s"])
    assert platform.plogp.sizes[-1] == 4096
    assert platform.network.nodes == 4
    # the 4 ranks ran on this machine (one boot_id): they share its cores; o_s, o_r are
    # plogp's (all its sizes are below the eager limit here)
    cpu = platform.sections["cpu"]
    assert cpu.cores == len(set(host["cpus"]))
    assert cpu.sizes == platform.plogp.sizes and cpu.o_r == platform.plogp.o_r
    text = out.read_text()

    # again, with lmo added: the three parts are reused, lmo is measured
    res = run(4, *first[:-1], "tcp,plogp,tree,lmo", "-o", str(out), timeout=600)
    assert res.returncode == 0, res.stderr
    for part in ("tcp", "plogp", "tree"):
        assert f"{part}: campaign" in res.stderr and "complete, reused" in res.stderr
    assert "[4/4] lmo: measuring" in res.stderr
    assert load_platform(str(out)).sections.get("lmo") is not None

    # an unfinished campaign (as after a kill) is resumed, and the result is the same file
    with ResultsDB(db) as rdb:
        plogp_id = [c.id for c in rdb.campaigns() if c.benchmark == "plogp"][-1]
        rdb.set_status(plogp_id, "failed")
    again = tmp_path / "again.yaml"
    res = run(4, *first, "-o", str(again), timeout=600)
    assert res.returncode == 0, res.stderr
    assert f"plogp: resuming campaign {plogp_id}" in res.stderr
    assert again.read_text() == text
    # and fit of the same campaigns gives the same file too
    with ResultsDB(db, read_only=True) as rdb:
        ids = sorted(c.id for c in rdb.campaigns() if c.benchmark in ("tcp", "plogp", "tree"))
    refit = commodel_cmd("fit", "--db", str(db), *[x for i in ids for x in ("--campaign", str(i))])
    assert refit.returncode == 0, refit.stderr
    assert refit.stdout == text


@pytest.mark.mpi
@needs_mpi
def test_calibrate_bad_output_directory_fails_before_measuring(tmp_path):
    res = run(2, "calibrate", "--db", str(tmp_path / "c.duckdb"), "-o", "/nonexistent/p.yaml")
    assert res.returncode == 2
    assert "/nonexistent" in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "c.duckdb").exists()


def test_calibrate_fit_and_the_models_never_read_a_cluster_spec():
    """A user has only the network: nothing that measures, fits or predicts may look at the
    emulated cluster's spec (its module, its loader, or the variable ``cluster mpirun`` sets)."""
    package = ROOT / "python" / "commodel"
    files = [
        *(package / "measure").glob("*.py"),
        *(package / "fit").glob("*.py"),
        *(package / "platform").glob("*.py"),
        *(package / "lmo").glob("*.py"),
        package / "prediction.py",
        package / "cli" / "calibrate.py",
        package / "cli" / "fit.py",
        package / "cli" / "measure.py",
        package / "cli" / "predict.py",
    ]
    assert len(files) > 30
    for path in files:
        text = path.read_text(encoding="utf-8")
        for marker in ("COMMODEL_CLUSTER_SPEC", "cluster.spec", "load_spec", "tree_buffers"):
            assert marker not in text, f"{path.relative_to(ROOT)} mentions {marker}"


def test_many_to_one_counts_are_spread_from_3_to_p():
    from commodel.measure.manytoone import spread_counts

    assert spread_counts(12, 7) == [3, 5, 6, 7, 9, 11, 12]
    assert spread_counts(9, 7) == [3, 4, 5, 6, 7, 8, 9]
    assert spread_counts(4, 7) == [3, 4]
    assert spread_counts(12, 0) == list(range(3, 13))
    assert calibrate.parts(1 << 20)["many-to-one"].options["counts"] == 7
    assert calibrate.parts(1 << 20)["lmo"].options["triples"] == "cover"


@pytest.mark.parametrize(
    "ranks, lmo_reps, counts, budget, wire_reps",
    [
        (3, 5, 7, 3.0, 3),
        (8, 5, 7, 3.0, 3),
        # 9 ranks: 72 pairs, 5 x 56/72 = 3.9 -> 4; n = 3, 5, 6, 7, 9 sum to 30 <= 33
        (9, 4, 5, 2.62, 2),
        # 12 ranks: 132 pairs -> 3; n = 3, 6, 9, 12 (30; five counts would be 38);
        # 3 s x 7/11
        (12, 3, 4, 1.91, 2),
        (64, 3, 3, 0.33, 2),
    ],
)
def test_quick_options_keep_about_their_cost_on_8_ranks(ranks, lmo_reps, counts, budget, wire_reps):
    from commodel.measure.manytoone import spread_counts

    table = calibrate.parts(1 << 20, ranks)
    assert table["lmo"].options["reps"] == lmo_reps
    assert table["many-to-one"].options["counts"] == counts
    assert table["efficiency"].options["budget"] == budget
    assert table["wire"].options["reps"] == wire_reps
    if 8 < ranks <= 12:
        assert sum(spread_counts(ranks, counts)) <= sum(spread_counts(8, 7)) == 33


def test_slow_link_limits_are_in_the_quick_options():
    # on 9 hosts at 21 Mbit/s (a dev cluster) the calibration took 214 s, 186 s with these
    table = calibrate.parts(256 << 10, 9)
    assert table["plogp"].options["budget"] == calibrate.PLOGP_BUDGET == 20.0
    assert table["efficiency"].options["round_limit"] == calibrate.ROUND_LIMIT == 3.0
    assert table["efficiency"].options["min_reps"] == 2
    assert table["chain"].options["min_reps"] == 2


def test_an_all_to_all_size_is_skipped_when_its_round_would_take_too_long():
    from commodel.measure.efficiency import too_long

    # 64 KiB rounds of 2 s: 128 KiB would take 4 s
    assert too_long((65536, 2.0), 131072, 3.0)
    assert not too_long((65536, 1.4), 131072, 3.0)  # 2.8 s
    assert not too_long((65536, 2.0), 131072, 0.0)  # no limit
    assert not too_long(None, 4096, 3.0)  # the first size is always measured
