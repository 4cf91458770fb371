"""``measure collective`` and ``measure collective-sweep`` under mpirun over loopback TCP."""

from __future__ import annotations

import json
import re
import time

import pytest

from commodel.measure.collective import (
    batch_reps,
    forced_algorithm,
    label_of,
    run_mca,
    sweep_algorithms,
    validate_options,
)
from commodel.measure.concurrent import ci_ok
from mpirun import commodel, connect_when_released, env, kill_group, needs_mpi, start


def test_forced_algorithm_from_the_environment():
    on = {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1"}
    assert forced_algorithm("alltoall", {}) == {"algorithm": 0, "rules_file": None}
    assert forced_algorithm("alltoall", {**on, "OMPI_MCA_coll_tuned_alltoall_algorithm": "3"}) == {
        "algorithm": 3,
        "rules_file": None,
    }
    assert (
        forced_algorithm("bcast", {**on, "OMPI_MCA_coll_tuned_bcast_algorithm": "knomial"})[
            "algorithm"
        ]
        == 7
    )
    # a rules file counts only with dynamic rules on
    rules = {"OMPI_MCA_coll_tuned_dynamic_rules_filename": "/r.txt"}
    assert forced_algorithm("gather", rules)["rules_file"] is None
    assert forced_algorithm("gather", {**on, **rules})["rules_file"] == "/r.txt"
    # Intel MPI: one preset is recorded as the algorithm; a value with size ranges (the
    # settings advise writes) as it is, not as one algorithm
    intel = {"I_MPI_ADJUST_ALLTOALL": "3"}
    assert forced_algorithm("alltoall", intel) == {"algorithm": 3, "rules_file": None}
    assert label_of("alltoall", 3, intel) == "pairwise"
    ranges = "1:0-1023;2:1024-2147483647"
    assert forced_algorithm("alltoall", {"I_MPI_ADJUST_ALLTOALL": ranges}) == {
        "algorithm": 0,
        "rules_file": None,
        "settings": ranges,
    }
    from commodel.errors import CommodelError

    # a number read as the MPI reads it: ASCII digits ('²' ended in int()'s ValueError,
    # 5000 digits in its digit limit), an id within a C int
    for value, said in (("\u00b2", "is not a preset id"), ("9" * 5000, "above 2^31 - 1"),
                        ("\u0663", "is not a preset id")):  # fmt: skip
        with pytest.raises(CommodelError, match=f"I_MPI_ADJUST_ALLTOALL=.*{re.escape(said)}"):
            forced_algorithm("alltoall", {"I_MPI_ADJUST_ALLTOALL": value})
    ompi = {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1"}
    for value in ("\u00b2", "9" * 5000):
        with pytest.raises(CommodelError, match="OMPI_MCA_coll_tuned_alltoall_algorithm="):
            forced_algorithm("alltoall", {**ompi, "OMPI_MCA_coll_tuned_alltoall_algorithm": value})


@pytest.mark.parametrize(
    "environ, message",
    [
        ({"OMPI_MCA_coll_tuned_alltoall_algorithm": "2"}, "no effect without"),
        (
            {
                "OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
                "OMPI_MCA_coll_tuned_alltoall_algorithm": "6",
            },
            "algorithms 0..5",
        ),
        (
            {
                "OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
                "OMPI_MCA_coll_tuned_alltoall_algorithm": "fastest",
            },
            "not an algorithm of alltoall",
        ),
    ],
)
def test_forcing_errors(environ, message):
    from commodel.errors import CommodelError

    with pytest.raises(CommodelError, match=message):
        forced_algorithm("alltoall", environ)


def test_intel_settings_are_recorded_with_their_file(tmp_path):
    """advise --verify names the settings file beside its variables: the campaign records
    it as the rules file, and a file that says otherwise than the environment is an error,
    as is a value Intel MPI would ignore."""
    from commodel.errors import CommodelError
    from commodel.measure.collective import SweepRun, run_forcing, validate_options
    from commodel.mpis import get
    from commodel.mpis.intelmpi import SETTINGS_FILE_VAR

    path = tmp_path / "allreduce.env"
    path.write_text("# advice\nexport I_MPI_ADJUST_ALLREDUCE='1:0-65535;2:65536-2147483647'\n")
    env = get("intel-mpi").run_env("allreduce", 0, str(path))
    assert env == {
        "I_MPI_ADJUST_ALLREDUCE": "1:0-65535;2:65536-2147483647",
        SETTINGS_FILE_VAR: str(path),
    }
    opts = validate_options({"collective": "allreduce", "sizes": [1024]}, environ=env)
    assert (opts["algorithm"], opts["rules_file"], opts["settings"]) == (
        0, str(path), "1:0-65535;2:65536-2147483647",
    )  # fmt: skip
    with pytest.raises(CommodelError, match="the file sets I_MPI_ADJUST_ALLREDUCE"):
        forced_algorithm("allreduce", {**env, "I_MPI_ADJUST_ALLREDUCE": "8"})
    with pytest.raises(CommodelError, match="Intel MPI ignores it"):
        forced_algorithm("allreduce", {"I_MPI_ADJUST_ALLREDUCE": "1:0-2147483648"})
    # the forced presets of a verification: those with a generator
    assert sweep_algorithms("allreduce", 8, "intel-mpi") == [0, 1, 2, 8]
    assert sweep_algorithms("bcast", 8, "intel-mpi") == [0, 1, 3, 7]
    # its "ran" run: the settings, no Open MPI counters on the launcher line (hydra would
    # refuse --mca); the kernel counts the bytes
    ran = run_forcing("allreduce", SweepRun("ran", 0, str(path)), True, "intel-mpi")
    assert ran == env
    ompi = run_forcing("allreduce", SweepRun("ran", 0, None), True, "openmpi-5.0")
    assert ompi["OMPI_MCA_pml_monitoring_enable"] == "1"


def test_sweep_skips_two_proc_off_two_ranks():
    assert sweep_algorithms("alltoall", 4) == [0, 1, 2, 3, 4]
    assert sweep_algorithms("alltoall", 2) == [0, 1, 2, 3, 4, 5]
    assert sweep_algorithms("bcast", 4) == list(range(10))


def test_forced_runs_segment_as_the_generators_and_rules_files_do():
    # a forced algorithm is unsegmented unless coll_tuned_<coll>_algorithm_segmentsize says
    # otherwise; bcast pipeline and gather linear_sync are predicted (and written into rules
    # files) with 8 KiB and 1 KiB segments, so their forced runs must use the same
    def mca(collective, alg):
        return {k.removeprefix("OMPI_MCA_"): v for k, v in run_mca(collective, alg).items()}

    assert mca("bcast", 3)["coll_tuned_bcast_algorithm_segmentsize"] == "8192"
    assert mca("gather", 3)["coll_tuned_gather_algorithm_segmentsize"] == "1024"
    assert mca("bcast", 2) == {
        "coll_tuned_use_dynamic_rules": "1",
        "coll_tuned_bcast_algorithm": "2",
    }
    assert mca("bcast", 0) == {}


def test_batch_reps_goes_past_the_cap_only_on_a_budget():
    opts = {"min_reps": 5, "max_reps": 8, "ci": 0.02}
    wide = [1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0]  # CI far from 2%
    steady = [1.0] * 5
    assert batch_reps([], 0.0, opts) == 5
    assert batch_reps(steady, 0.1, opts) == 0  # interval met at min_reps
    assert batch_reps(wide[:5], 0.1, opts) == 2  # half as many, up to the cap
    assert batch_reps(wide[:6], 0.1, opts) == 2  # 3, cut to the cap's 8
    assert batch_reps(wide[:8], 0.1, opts) == 0  # at the cap, no budget
    budget = {**opts, "budget": 1.0}
    assert batch_reps(wide[:8], 0.1, budget) == 4  # half as many
    assert batch_reps(wide[:8], 0.9, budget) == 1  # what 0.1 s holds at 0.1125 s a rep
    assert batch_reps(wide[:12], 0.5, budget) == 6  # 0.5 s holds 12 more, half is 6
    assert batch_reps(wide[:8], 1.0, budget) == 0  # spent
    assert batch_reps(wide[:8], 0.0, budget) == 0  # no pace to go by
    assert batch_reps(steady + steady, 0.1, budget) == 0  # the interval still ends it


def test_budget_is_recorded_only_when_given_and_checked():
    from commodel.errors import CommodelError

    plain = validate_options({"collective": "bcast"}, environ={})
    assert "budget" not in plain  # campaigns from before the option keep their options
    assert validate_options({"collective": "bcast", "budget": 0}, environ={}) == plain
    assert validate_options({"collective": "bcast", "budget": 2}, environ={})["budget"] == 2.0
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(CommodelError, match="--budget: expected seconds >= 0"):
            validate_options({"collective": "bcast", "budget": bad}, environ={})


@pytest.mark.mpi
@needs_mpi
def test_a_budget_takes_a_noisy_size_to_its_interval(tmp_path):
    # a 2-rank barrier over loopback takes about a microsecond and spreads far more than
    # 2% (one preemption outweighs thousands of samples): with --max-reps 5 alone it stops
    # at 5, with a budget it goes on until its interval is met or the budget spent
    db = tmp_path / "b.duckdb"
    common = ["measure", "collective", "--db", str(db), "--collective", "barrier",
              "--min-reps", "5", "--max-reps", "5", "--quiet"]  # fmt: skip
    began = time.monotonic()
    res = run_env({}, 2, *common, "--budget", "2")
    took = time.monotonic() - began
    assert res.returncode == 0, res.stderr
    rows, camps = samples(db)
    [(_cid, opts, status)] = camps
    assert status == "complete" and opts["budget"] == 2.0
    times = [r[4] for r in rows]
    assert len(times) > 5 or ci_ok(times, 0.02)
    assert ci_ok(times, 0.02) or took >= 2.0
    bad = run_env({}, 2, *common, "--budget", "-1")
    assert bad.returncode == 2 and "--budget: expected seconds >= 0" in bad.stderr


def run_env(extra: dict[str, str], n: int, *args: str):
    import subprocess

    from mpirun import command

    e = env()
    e.update(extra)
    return subprocess.run(command(n, *args), env=e, capture_output=True, text=True, timeout=240)


def samples(db) -> list[tuple]:
    con = connect_when_released(db)
    try:
        rows = con.execute(
            "SELECT campaign, size_bytes, n_ranks, repetition, value_s, extra FROM samples "
            "ORDER BY campaign, seq"
        ).fetchall()
        opts = con.execute("SELECT id, options, status FROM campaigns ORDER BY id").fetchall()
    finally:
        con.close()
    return rows, [(i, json.loads(o), s) for i, o, s in opts]


@pytest.mark.parametrize("n, algorithm", [(2, 5), (4, 2), (4, 0)])
@pytest.mark.mpi
@needs_mpi
def test_measure_forced_algorithm(tmp_path, n, algorithm):
    db = tmp_path / "c.duckdb"
    extra = {}
    if algorithm:
        extra = {
            "OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
            "OMPI_MCA_coll_tuned_alltoall_algorithm": str(algorithm),
        }
    res = run_env(
        extra, n, "measure", "collective", "--db", str(db), "--collective", "alltoall",
        "--sizes", "1KiB,8KiB", "--max-reps", "12", "--quiet",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    name = {0: "default", 2: "pairwise", 5: "two_proc"}[algorithm]
    assert f"alltoall on {n} ranks, algorithm {algorithm} ({name})" in res.stdout
    rows, camps = samples(db)
    [(cid, opts, status)] = camps
    assert status == "complete" and opts["algorithm"] == algorithm and opts["rules_file"] is None
    for m in (1024, 8192):
        mine = [r for r in rows if r[1] == m]
        assert 5 <= len(mine) <= 12
        assert [r[3] for r in mine] == list(range(len(mine)))
        assert all(r[2] == n and r[4] > 0 for r in mine)
        extras = {json.dumps(json.loads(r[5]), sort_keys=True) for r in mine}
        assert len(extras) == 1
        extra_row = json.loads(extras.pop())
        assert extra_row["algorithm"] == algorithm
        assert extra_row["rule_message_size"] == m * n
        assert extra_row["checked_by"] == "MPI_T"


@pytest.mark.mpi
@needs_mpi
def test_forcing_without_dynamic_rules_is_an_error(tmp_path):
    res = run_env(
        {"OMPI_MCA_coll_tuned_alltoall_algorithm": "2"}, 2, "measure", "collective",
        "--db", str(tmp_path / "x.duckdb"), "--collective", "alltoall", "--quiet",
    )  # fmt: skip
    assert res.returncode == 2
    assert "coll_tuned_use_dynamic_rules 1" in res.stderr
    assert "Traceback" not in res.stderr


@pytest.mark.mpi
@needs_mpi
def test_sigkill_and_resume(tmp_path):
    db = tmp_path / "k.duckdb"
    sizes = ",".join(str(1024 * (k + 1)) for k in range(40))
    args = ["measure", "collective", "--db", str(db), "--collective", "bcast",
            "--sizes", sizes, "--min-reps", "20", "--max-reps", "20", "--quiet"]  # fmt: skip
    proc = start(2, *args)
    wal = db.parent / (db.name + ".wal")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if wal.exists() and wal.stat().st_size > 20000:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the campaign finished before it could be killed"
    kill_group(proc)
    before, _ = samples(db)
    assert 0 < len(before) < 40 * 20
    res = run_env({}, 2, *args, "--resume")
    assert res.returncode == 0, res.stderr
    rows, camps = samples(db)
    assert [(c[0], c[2]) for c in camps] == [(1, "complete")]
    # every size exactly 20 repetitions, numbered 0..19, the stored ones kept as they were
    assert len(rows) == 40 * 20
    for k in range(40):
        assert [r[3] for r in rows if r[1] == 1024 * (k + 1)] == list(range(20))
    assert rows[: len(before)] == before


@pytest.mark.mpi
@needs_mpi
def test_sweep_runs_one_mpirun_per_algorithm_and_keeps_complete_ones(tmp_path):
    db = tmp_path / "s.duckdb"
    mpirun_cmd = "mpirun --oversubscribe" + (" --allow-run-as-root" if _root() else "")
    args = ["measure", "collective-sweep", "--db", str(db), "-n", "2", "--collective",
            "barrier", "--algorithms", "0,4,5", "--max-reps", "10", "--quiet",
            "--mpirun", mpirun_cmd]  # fmt: skip
    res = commodel(*args, timeout=300)
    assert res.returncode == 0, res.stderr
    _rows, camps = samples(db)
    assert [(c[1]["algorithm"], c[2]) for c in camps] == [
        (0, "complete"),
        (4, "complete"),
        (5, "complete"),
    ]
    assert "0 default" in res.stdout and "4 bruck" in res.stdout and "5 two_proc" in res.stdout
    again = commodel(*args, timeout=300)
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("is complete, kept") == 3
    _rows, camps2 = samples(db)
    assert len(camps2) == 3


def _root() -> bool:
    import os

    return os.geteuid() == 0


@pytest.mark.mpi
@needs_mpi
@pytest.mark.parametrize(
    "collective", ["allgather", "allreduce", "bcast", "gather", "scatter", "barrier"]
)
def test_every_collective_on_3_ranks_with_root_2(tmp_path, collective):
    db = tmp_path / "e.duckdb"
    res = run_env(
        {}, 3, "measure", "collective", "--db", str(db), "--collective", collective,
        "--sizes", "3KiB", "--root", "2", "--max-reps", "6", "--quiet",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    rows, [(_cid, opts, status)] = samples(db)
    assert status == "complete" and opts["root"] == 2
    size = 0 if collective == "barrier" else 3072
    assert {r[1] for r in rows} == {size} and 5 <= len(rows) <= 6
    rule = json.loads(rows[0][5])["rule_message_size"]
    assert rule == {"allreduce": 3072, "bcast": 3072, "barrier": 0}.get(collective, 3 * 3072)


@pytest.mark.mpi
@needs_mpi
@pytest.mark.parametrize(
    "extra, args, message",
    [
        (
            {
                "OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
                "OMPI_MCA_coll_tuned_alltoall_algorithm": "5",
            },
            ["--collective", "alltoall"],
            "runs on 2 ranks only, not 3",
        ),
        ({}, ["--collective", "gather", "--root", "3"], "--root 3 is not a rank of the 3"),
    ],
)
def test_unrunnable_choices_are_errors(tmp_path, extra, args, message):
    res = run_env(
        extra, 3, "measure", "collective", "--db", str(tmp_path / "u.duckdb"), "--quiet", *args
    )
    assert res.returncode == 2
    assert message in res.stderr and "Traceback" not in res.stderr


@pytest.mark.mpi
@needs_mpi
def test_forcing_from_a_parameter_file_is_caught_through_mpi_t(tmp_path):
    """An MCA parameter file forces pairwise behind the environment's back: Open MPI's own
    control variables (MPI_T) show it, and the campaign refuses to record a wrong label."""
    params = tmp_path / "mca-params.conf"
    params.write_text("coll_tuned_use_dynamic_rules = 1\ncoll_tuned_alltoall_algorithm = 2\n")
    res = run_env(
        {"OMPI_MCA_mca_base_param_files": str(params)}, 2, "measure", "collective",
        "--db", str(tmp_path / "p.duckdb"), "--collective", "alltoall", "--quiet",
    )  # fmt: skip
    assert res.returncode == 2
    assert "Open MPI holds alltoall algorithm 2 (rules file None)" in res.stderr
    assert "environment says 0" in res.stderr
