"""Long runs survive SIGKILL (root; the emulated cluster, 3 hosts; a few minutes).

``calibrate`` and ``advise --verify`` are killed with SIGKILL at random points, a few times
each, and run again on the same database: every sample stored before a kill is still there
once the run completes, none is stored twice (a step is written whole, with one timestamp,
or not at all: what a kill loses is the step in flight), and after each kill nothing of the
run is left in the cluster (mpirun and the ranks end with the process that started them,
``commodel.children``). ``cluster up`` killed at random points leaves a dead build that the
next ``cluster up`` removes by itself; ``cluster down`` then leaves nothing. The points are
drawn from a seed printed on failure (``COMMODEL_KILL_SEED`` repeats them).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mpirun import connect_when_released
from test_validate_cluster import ENV, UNAVAILABLE

NAME = "cmkill"
SEED = int(os.environ.get("COMMODEL_KILL_SEED", str(int(time.time()) % 100000)))
SPEC = """\
name: kill-3
hosts: 3
nic_rate: 100Mbit
topology: {type: racks, racks: 1, backbone_rate: 100Mbit}
"""

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.mpi,
    pytest.mark.slow,
    pytest.mark.skipif(UNAVAILABLE is not None, reason=UNAVAILABLE or ""),
]


def commodel(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "commodel", *args],
        capture_output=True, text=True, env=ENV, timeout=timeout, check=False,
    )  # fmt: skip


def namespaces() -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith(f"cm-{NAME}-")]


def processes_in_cluster() -> list[int]:
    pids = []
    for ns in namespaces():
        out = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout
        pids += [int(p) for p in out.split()]
    return pids


def wait_until_empty(timeout: float = 20.0) -> list[int]:
    """The processes still in the cluster's namespaces after ``timeout`` (none, we hope)."""
    deadline = time.monotonic() + timeout
    while (left := processes_in_cluster()) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def stored(db: Path) -> list[tuple]:
    """Every sample of the database: (campaign, seq, step, value_s, taken)."""
    if not db.exists():
        return []
    con = connect_when_released(db)
    try:
        tables = {
            r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()
        }
        if "samples" not in tables:
            return []
        return con.execute(
            "SELECT campaign, seq, step, value_s, taken FROM samples ORDER BY campaign, seq"
        ).fetchall()
    finally:
        con.close()


def kill_window(args: list[str], kills: int) -> float:
    """The latest a kill may fall, s: an uninterrupted run of ``args`` (to its own
    database) timed, 0.8 of it split among the ``kills`` (each resumed run has less left to
    do), at least 1 s."""
    start = time.monotonic()
    whole = subprocess.run(args, env=ENV)
    assert whole.returncode == 0
    return max(1.0, 0.8 * (time.monotonic() - start) / kills)


def kill_and_resume(
    args: list[str], db: Path, kills: int, rng: random.Random, longest: float
) -> tuple[str, int]:
    """Run ``args`` ``kills`` times, each killed (SIGKILL, the process alone) after a random
    time of at most ``longest`` s, then once to the end; check the database and the cluster
    after every kill. Returns the last run's output and how many runs were killed (a run
    may end before its kill)."""
    before: list[tuple] = []
    killed = 0
    for k in range(kills):
        proc = subprocess.Popen(args, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        delay = rng.uniform(0.5, longest)
        try:
            proc.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            killed += 1
        left = wait_until_empty()
        assert left == [], f"kill {k} after {delay:.1f} s (seed {SEED}): processes {left} left"
        now = stored(db)
        assert set(before) <= set(now), f"kill {k} (seed {SEED}): samples stored before are gone"
        before = now
    result = subprocess.run(args, env=ENV, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-2000:]
    final = stored(db)
    assert set(before) <= set(final), f"seed {SEED}: samples stored before a kill are gone"
    # a step is stored once: all its rows carry the one timestamp of its write
    writes: dict[tuple, set] = {}
    for campaign, _seq, step, _value, taken in final:
        writes.setdefault((campaign, step), set()).add(taken)
    twice = [key for key, taken in writes.items() if len(taken) > 1]
    assert twice == [], f"seed {SEED}: steps stored twice: {twice[:5]}"
    assert wait_until_empty() == []
    return result.stdout + result.stderr, killed


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    spec = tmp_path_factory.mktemp("kill") / "kill-3.yaml"
    spec.write_text(SPEC)
    up = commodel("cluster", "up", "--spec", str(spec), "--name", NAME)
    assert up.returncode == 0, up.stderr
    try:
        yield spec
    finally:
        down = commodel("cluster", "down", "--name", NAME)
        assert down.returncode == 0, down.stderr
    assert namespaces() == []


def test_calibrate_killed_at_random_points_resumes(cluster, tmp_path):
    rng = random.Random(SEED)

    def calibrate(db: Path, out: Path) -> list[str]:
        return [
            sys.executable, "-m", "commodel", "cluster", "mpirun", "--name", NAME, "--",
            sys.executable, "-m", "commodel", "calibrate", "--db", str(db), "-o", str(out),
            "--parts", "tcp,plogp,lmo", "--max-size", "256KiB", "--quiet",
        ]  # fmt: skip

    # calibrate's quick options make it seconds: kills drawn up to a fixed 10 s came after
    # its end
    longest = kill_window(calibrate(tmp_path / "ref.duckdb", tmp_path / "ref.yaml"), kills=3)
    db = tmp_path / "cal.duckdb"
    args = calibrate(db, tmp_path / "p.yaml")
    out, killed = kill_and_resume(args, db, kills=3, rng=rng, longest=longest)
    assert killed >= 2, f"seed {SEED}: the runs ended before their kills"
    assert (tmp_path / "p.yaml").read_text().count("plogp:") == 1, out[-1000:]


def test_advise_verify_killed_at_random_points_resumes(cluster, tmp_path):
    rng = random.Random(SEED + 1)
    mpirun = f"{sys.executable} -m commodel cluster mpirun --name {NAME} --"

    def advise(db: Path) -> list[str]:
        return [
            sys.executable, "-m", "commodel", "advise", "--platform", "nomura2007",
            "--collective", "gather", "--ranks", "3", "--sizes", "1KiB,16KiB", "--verify",
            str(db), "--mpirun", mpirun, "--max-reps", "20", "--quiet",
        ]  # fmt: skip

    # a fixed 5 s let seed 80227 draw two kills after the resumed runs had ended
    longest = kill_window(advise(tmp_path / "ref.duckdb"), kills=3)
    db = tmp_path / "verify.duckdb"
    _out, killed = kill_and_resume(advise(db), db, kills=3, rng=rng, longest=longest)
    assert killed >= 2, f"seed {SEED}: the runs ended before their kills"
    assert (tmp_path / "verify.verify.csv").exists()


def test_cluster_up_killed_at_random_points_is_cleaned_by_the_next_up(tmp_path):
    rng = random.Random(SEED + 2)
    spec = tmp_path / "kill-up.yaml"
    # shaping: serialize, so that there is a daemon to leave behind too
    spec.write_text(SPEC.replace("name: kill-3", "name: kill-up") + "shaping: serialize\n")
    name = "cmkillup"
    state = Path(os.environ.get("COMMODEL_STATE_DIR", "/run/commodel"))
    for k in range(3):
        proc = subprocess.Popen(
            [sys.executable, "-m", "commodel", "cluster", "up", "--spec", str(spec), "--name", name],
            env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        delay = rng.uniform(0.05, 1.5)
        try:
            proc.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        again = commodel("cluster", "up", "--spec", str(spec), "--name", name)
        finished = proc.returncode == 0  # the kill came after `up` had finished
        if finished:
            assert again.returncode == 2 and "already exists" in again.stderr
        else:
            assert again.returncode == 0, (
                f"kill {k} after {delay:.2f} s (seed {SEED}): {again.stderr}"
            )
        down = commodel("cluster", "down", "--name", name)
        assert down.returncode == 0, down.stderr
        ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        assert f"cm-{name}-" not in ns
        assert sorted(p.name for p in state.glob(f"{name}.*")) == []
        wires = subprocess.run(
            ["pgrep", "-f", f"{name}.serialize-stats"], capture_output=True, text=True
        )
        assert wires.stdout.strip() == ""
