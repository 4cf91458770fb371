"""MPICH (the PyPI wheel, ``make mpis``) over the emulated cluster's TCP network (root;
about 30 seconds).

``commodel cluster mpirun --mpirun .mpi/mpich/bin/mpiexec`` starts hydra's proxies through
our agent and the ranks on the ofi netmod's tcp provider over the data NICs. The test
measures MPICH's default bcast (a binomial tree on fewer than 8 ranks) of 64 KiB on 4 hosts and reads each host's data NIC byte
counter around the run: the root sends every repetition's message to its two children, the
leaves send only acknowledgements, so the messages crossed the emulated (shaped) network
over TCP, not shared memory or the management network. The results database records the
MPI that measured. Brings its own cluster (``cmmpichtest``) up and always down.
"""

from __future__ import annotations

import subprocess

import pytest

from commodel.mpis import installed_prefix
from test_validate_cluster import SPEC, UNAVAILABLE, _commodel

MPICH = installed_prefix("mpich")
NAME = "cmmpichtest"
SIZE, REPS = 65536, 5


def _tx_bytes(state: dict) -> list[int]:
    dev = state["data_dev"]
    out = []
    for host in state["hosts"][:4]:
        text = subprocess.run(
            ["ip", "netns", "exec", host["ns"], "cat", f"/sys/class/net/{dev}/statistics/tx_bytes"],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        out.append(int(text))
    return out


@pytest.mark.cluster
@pytest.mark.mpi
@pytest.mark.skipif(UNAVAILABLE is not None, reason=UNAVAILABLE or "")
@pytest.mark.skipif(MPICH is None, reason="MPICH is not installed (make mpis)")
def test_mpich_messages_cross_the_emulated_tcp_network(tmp_path):
    from commodel.cluster.state import read_state
    from commodel.db import ResultsDB

    db = str(tmp_path / "mpich.duckdb")
    try:
        up = _commodel("cluster", "up", "--spec", SPEC, "--name", NAME)
        assert up.returncode == 0, up.stderr
        state = read_state(NAME)
        before = _tx_bytes(state)
        run = _commodel(
            "cluster", "mpirun", "--name", NAME, "--hosts", "4",
            "--mpirun", str(MPICH / "bin" / "mpiexec"), "--",
            str(MPICH / "bin" / "python"), "-m", "commodel", "measure", "collective",
            "--collective", "bcast", "--sizes", str(SIZE),
            "--min-reps", str(REPS), "--max-reps", str(REPS), "--db", db, "--quiet",
            timeout=300,
        )  # fmt: skip
        assert run.returncode == 0, run.stderr + run.stdout
        after = _tx_bytes(state)
    finally:
        down = _commodel("cluster", "down", "--name", NAME)
    assert down.returncode == 0, down.stderr
    sent = [a - b for a, b in zip(after, before)]
    # MPICH's default bcast on fewer than 8 ranks is the binomial tree: 0 -> 2, 0 -> 1, 2 -> 3
    assert sent[0] >= 2 * REPS * SIZE, sent
    assert sent[2] >= REPS * SIZE, sent
    assert sent[1] < REPS * SIZE / 4 and sent[3] < REPS * SIZE / 4, sent
    with ResultsDB(db, read_only=True) as results:
        camp = results.campaigns()[-1]
    assert "MPICH" in camp.mpi_library and camp.mpi_version.startswith("5."), camp
