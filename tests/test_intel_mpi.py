"""Intel MPI's settings (``I_MPI_ADJUST_<COLL>``): what ``advise --mpi intel-mpi`` writes,
and our reader against the library's own (``MPI_Init`` of the installed ``impi-rt`` prints
``Incorrect adjust value`` or ``Incorrect algorithm`` for a variable it ignores)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from commodel.errors import CommodelError
from commodel.mpis import get, installed_prefix
from commodel.mpis import intelmpi as im

IMPI = installed_prefix("intel-mpi")
needs_impi = pytest.mark.skipif(
    IMPI is None and not os.environ.get("CI"), reason="Intel MPI not installed: make mpis"
)


def test_written_value_selects_each_pick_at_its_sizes() -> None:
    picks = {4: [(1024, 1), (8192, 1), (65536, 2), (1048576, 8), (4194304, 0)]}
    value = im.adjust_value("allreduce", picks)
    assert value == "1:0-65535;2:65536-1048575;8:1048576-4194303;0:4194304-2147483647"
    items, problems = im.parse_adjust("allreduce", value, max_id=32)
    assert problems == []
    for size, number in picks[4]:
        assert im.lookup(items, 4, size) == number, size
    # below the first size the first pick holds, and at any communicator size
    assert im.lookup(items, 4, 0) == 1 and im.lookup(items, 4, 65535) == 1
    assert im.lookup(items, 9, 65536) == 2 and im.lookup(items, 4, 2**31 - 1) == 0
    # one communicator size a file: this build loses the size range next to a process range
    with pytest.raises(CommodelError, match="one communicator size at a time"):
        im.adjust_value("allreduce", {4: [(0, 1)], 8: [(0, 2)]})
    _items, problems = im.parse_adjust("allreduce", "1:0-65535@4-4")
    assert problems[0][0] == "warning" and "ignores the size range" in problems[0][1]


def test_reader_finds_what_intel_ignores() -> None:
    def kinds(value, max_id=32):
        return sorted({k for k, _m in im.parse_adjust("allreduce", value, max_id)[1]})

    assert kinds("8") == [] and kinds("8:0-100;") == [] and kinds("1:0-100@2") == ["warning"]
    assert kinds("33") == ["error"] and kinds("abc") == ["error"]
    assert kinds("8:0-") == ["error"] and kinds("8:101-2147483648@2-2") == ["error"]
    assert kinds("8:100-50") == ["warning"]  # Intel takes it; it selects nothing
    assert kinds("9" * 5000) == ["error"] and kinds("1:0-" + "9" * 5000) == ["error"]
    assert kinds("20") == ["warning"]  # in the build's range, not in the reference
    # digits that are not ASCII: str.isdigit takes them, Intel MPI does not ('²' ended in
    # int()'s ValueError, the intel-settings fuzz target's first finding; '٣' read as 3)
    for value in ("\u00b2", "\u0663", "\uff11", "1:\u0663-100", "8:0-100@\u00b2"):
        assert kinds(value) == ["error"], value
    _items, problems = im.parse_adjust("allreduce", "8:1-2;x:3")
    assert "'x' is not a preset id" in problems[0][1]
    assert "ignores I_MPI_ADJUST_ALLREDUCE whole" in problems[-1][1]


def test_settings_file_round_trip_and_errors(tmp_path) -> None:
    text = im.settings_text("bcast", "1:0-1023@8-8;3:1024-2147483647@8-8", "a header\nline 2")
    assert text.splitlines()[:2] == ["# a header", "# line 2"]
    path = tmp_path / "s.env"
    path.write_text(text)
    assert im.read_settings(path) == {"I_MPI_ADJUST_BCAST": "1:0-1023@8-8;3:1024-2147483647@8-8"}
    path.write_text("# x\nexport I_MPI_ADJUST_BCAST=1\nI_MPI_ADJUST_BCAST=2\n")
    with pytest.raises(CommodelError, match=r"s.env:3: I_MPI_ADJUST_BCAST set twice"):
        im.read_settings(path)
    path.write_text("export OTHER=1\n")
    with pytest.raises(CommodelError, match=r"s.env:1: not 'export I_MPI_ADJUST_<COLL>=VALUE'"):
        im.read_settings(path)
    assert im.adjust_env("bcast", 3, None) == {"I_MPI_ADJUST_BCAST": "3"}
    assert im.adjust_env("bcast", 0, None) == {}


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "commodel", *args], capture_output=True, text=True, timeout=300
    )


def test_advise_writes_settings_that_check_rules_reads(tmp_path) -> None:
    path = tmp_path / "allreduce.env"
    proc = _cli(
        "advise", "--mpi", "intel-mpi", "--platform", "nomura2007", "--collective", "allreduce",
        "--ranks", "4", "--sizes", "1KiB,1MiB", "--rules", str(path),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert f". {path} && mpiexec ..." in proc.stdout
    assert "numbers as I_MPI_ADJUST_ALLREDUCE's presets" in proc.stdout
    env = im.read_settings(path)
    items, problems = im.parse_adjust("allreduce", env["I_MPI_ADJUST_ALLREDUCE"])
    assert problems == []
    table = [ln.split() for ln in proc.stdout.splitlines() if ln[:2] == "4 "]
    assert len(table) == 2
    for row in table:  # P, size, unit, best..., chosen: the last two words
        p, size = int(row[0]), int(row[1]) * (1024 if row[2] == "KiB" else 1048576)
        assert im.lookup(items, p, size) == int(row[-2]), row
    check = _cli("advise", "--mpi", "intel-mpi", "--check-rules", str(path))
    assert check.returncode == 0 and "ok for Intel MPI: 0 warnings" in check.stdout, check
    path.write_text("export I_MPI_ADJUST_ALLREDUCE='1:0-100;99:101-200'\n")
    check = _cli("advise", "--mpi", "intel-mpi", "--check-rules", str(path))
    assert check.returncode == 2, check
    assert "preset 99" in check.stdout and "Intel MPI ignores" in check.stderr
    two = _cli(
        "advise", "--mpi", "intel-mpi", "--platform", "nomura2007", "--collective", "bcast",
        "--ranks", "4,8", "--sizes", "1KiB", "--rules", str(tmp_path / "two.env"),
    )  # fmt: skip
    assert two.returncode == 2 and "give one --ranks" in two.stderr, two.stderr
    # --verify runs Intel MPI (tests/test_intel_mpi_cluster.py): it writes the settings,
    # then a launcher that does not start is an error naming it
    verify = _cli(
        "advise", "--mpi", "intel-mpi", "--platform", "nomura2007", "--collective", "bcast",
        "--ranks", "4", "--sizes", "1KiB", "--verify", str(tmp_path / "v.duckdb"),
        "--mpirun", str(tmp_path / "no-mpiexec"),
    )  # fmt: skip
    assert verify.returncode == 2 and "--mpirun: cannot start" in verify.stderr, verify.stderr
    assert (tmp_path / "v.rules.txt").read_text().startswith("# ")
    assert "export I_MPI_ADJUST_BCAST=" in (tmp_path / "v.rules.txt").read_text()
    # what reads or writes Open MPI's rules format says so
    for flag in ("--use-rules", "--measured-rules"):
        given = _cli(
            "advise", "--mpi", "intel-mpi", "--platform", "nomura2007", "--collective",
            "bcast", "--ranks", "4", "--verify", str(tmp_path / "w.duckdb"), flag,
            str(tmp_path / "v.rules.txt"),
        )  # fmt: skip
        assert given.returncode == 2 and "not available for Intel MPI" in given.stderr


@needs_impi
def test_algorithms_are_within_the_installed_builds_ranges() -> None:
    ranges = im.preset_ranges(IMPI)
    assert ranges == {"allreduce": 32, "bcast": 22, "allgather": 6, "alltoall": 18}
    for coll, algs in get("intel-mpi").algorithms.items():
        assert [n for n, _a, _g in algs] == list(range(1, len(algs) + 1))
        assert len(algs) <= ranges[coll]


@needs_impi
@pytest.mark.mpi
def test_our_reader_agrees_with_intel_mpis(tmp_path) -> None:
    """Each value: MPI_Init of one rank (on this machine, no cluster) complains exactly when
    our reader finds an error."""
    values = ["8", "1:0-100;8:101-2147483647", "8:0-100@1,200-300", "33", "abc",
              "8:0-", "8:101-2147483648@1-1", "8:0-4294967295", "8:100-50", "1;;2",
              "\u00b2", "\u0663", "1:\u0663-100", "8:0-100@\uff11"]  # fmt: skip
    ranges = im.preset_ranges(IMPI)
    for value in values:
        proc = subprocess.run(
            [str(IMPI / "bin" / "mpiexec"), "-n", "1", "-genv", "I_MPI_FABRICS", "ofi",
             "-genv", "FI_PROVIDER", "tcp", "-genv", "I_MPI_PIN", "0",
             "-genv", "I_MPI_ADJUST_ALLREDUCE", value, str(IMPI / "bin" / "python"), "-c",
             "from mpi4py import MPI; MPI.COMM_WORLD.allreduce(1)"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        ignored = "Incorrect" in proc.stdout + proc.stderr
        _items, problems = im.parse_adjust("allreduce", value, ranges["allreduce"])
        assert ignored == any(k == "error" for k, _m in problems), (value, proc.stdout)


@needs_impi
@pytest.mark.mpi
def test_collective_sweep_forces_each_mapped_preset(tmp_path) -> None:
    """measure collective-sweep --mpi intel-mpi with Intel's own mpiexec, 2 ranks on this
    machine (shared memory: no cluster): Intel's default, then each allreduce preset that has
    a generator forced with I_MPI_ADJUST_ALLREDUCE=<id>, each a campaign recording the
    library and its version and the preset."""
    from commodel.db import ResultsDB

    db = tmp_path / "sweep.duckdb"
    launcher = (
        f"{IMPI / 'bin' / 'mpiexec'} -genv I_MPI_FABRICS shm -genv I_MPI_WAIT_MODE 1 "
        "-genv I_MPI_PIN 0"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("I_MPI_ADJUST_")}
    proc = subprocess.run(
        [str(IMPI / "bin" / "python"), "-m", "commodel", "measure", "collective-sweep",
         "--mpi", "intel-mpi", "-n", "2", "--collective", "allreduce", "--sizes", "1KiB",
         "--min-reps", "3", "--max-reps", "3", "--db", str(db), "--mpirun", launcher,
         "--quiet"],
        capture_output=True, text=True, timeout=600, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-3000:]
    assert "-genv I_MPI_ADJUST_ALLREDUCE 8" in proc.stdout  # how the preset was forced
    assert "2 rabenseifner" in proc.stdout and "8 ring" in proc.stdout  # the table's heads
    with ResultsDB(str(db), read_only=True) as results:
        campaigns = [c for c in results.campaigns() if c.benchmark == "collective"]
        samples = {c.options["algorithm"]: results.samples(c.id) for c in campaigns}
    assert sorted(samples) == [0, 1, 2, 8]
    assert {c.mpi_library for c in campaigns} == {"Intel(R) MPI Library 2021.18.1 for Linux* OS"}
    assert all(c.status == "complete" for c in campaigns)
    for number, rows in samples.items():
        assert len(rows) == 3 and all(r["extra"]["algorithm"] == number for r in rows)
    # a preset that is not Intel MPI's: an error before any mpiexec
    bad = subprocess.run(
        [str(IMPI / "bin" / "python"), "-m", "commodel", "measure", "collective-sweep",
         "--mpi", "intel-mpi", "-n", "2", "--collective", "gather", "--db",
         str(tmp_path / "bad.duckdb"), "--mpirun", launcher],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert bad.returncode == 2 and "not advised for Intel MPI" in bad.stderr, bad.stderr
