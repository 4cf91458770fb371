"""Intel MPI (the PyPI wheel ``impi-rt``, ``make mpis``) over the emulated cluster's TCP
network, with the settings ``advise --mpi intel-mpi`` writes (root; about a minute).

``commodel cluster mpirun --mpirun .mpi/intel-mpi/bin/mpiexec`` starts Intel's hydra proxies
through our agent and the ranks on libfabric's tcp provider over the data NICs
(``I_MPI_FABRICS=ofi``: no shared memory). Intel MPI is closed source, so which algorithm
ran is read from the kernel: the bytes each rank's TCP connections on the data network
carried to each other rank during one call (``python -m commodel.cluster.sockets``). They
equal, peer by peer (plus the library's headers, tens of bytes a message), the traffic of
the generator of the preset our settings name at that size, and differ from the other
preset's. Brings its own cluster (``cmimpitest``) up and always down.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import commodel
from commodel.measure.traffic import schedule_traffic
from commodel.mpis import get, installed_prefix
from commodel.mpis.intelmpi import adjust_value, lookup, parse_adjust, read_settings
from test_validate_cluster import ROOT, SPEC, UNAVAILABLE

IMPI = installed_prefix("intel-mpi")
NAME = "cmimpitest"
HOSTS = 4
# headroom per message for what the MPI library and libfabric add to a message (measured:
# 24-40 bytes; a barrier's few bytes between the two readings too)
PER_MESSAGE = 120  # bytes of headers a message may add (measured: 48-96 B for 1 KiB)


# every test here brings a cluster up and runs Intel MPI on it
pytestmark = [
    pytest.mark.cluster,
    pytest.mark.mpi,
    pytest.mark.skipif(UNAVAILABLE is not None, reason=UNAVAILABLE or ""),
    pytest.mark.skipif(
        IMPI is None and not os.environ.get("CI"), reason="Intel MPI is not installed (make mpis)"
    ),
]


def _run(*args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "python"), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "commodel", *args],
        capture_output=True, text=True, env=full, timeout=timeout,
    )  # fmt: skip


def _traffic(collective: str, sizes: list[int], env: dict, debug: bool = False) -> tuple:
    """Per size, the measured matrix [src][dst] of bytes; and the launcher's output."""
    args = ["cluster", "mpirun", "--name", NAME, "--hosts", str(HOSTS)]
    args += ["--mpirun", str(IMPI / "bin" / "mpiexec")]
    if debug:
        args += ["-genv", "I_MPI_DEBUG", "5"]
    args += ["--", str(IMPI / "bin" / "python"), "-m", "commodel.cluster.sockets"]
    proc = _run(*args, collective, ",".join(map(str, sizes)), env=env)
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-3000:]
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert [r["size"] for r in rows] == sizes, proc.stdout[-2000:]
    return {r["size"]: r["bytes"] for r in rows}, proc.stdout


def _fits(got: list[list[int]], generator: str, size: int) -> bool:
    """Every pair's measured bytes are the generator's plus at most PER_MESSAGE a message."""
    want = schedule_traffic(commodel.collective(generator, len(got), size))
    for src, row in enumerate(got):
        for dst, value in enumerate(row):
            if src != dst:  # Intel MPI sends a rank's own block to itself over the socket
                messages, nbytes = want[src][dst]
                if not nbytes <= value <= nbytes + PER_MESSAGE * (messages + 1):
                    return False
    return True


def _generator(collective: str, number: int) -> str:
    return dict((n, g) for n, _a, g in get("intel-mpi").algorithms[collective])[number]


def test_intel_mpi_runs_our_settings_over_the_emulated_tcp_network(tmp_path):
    settings = tmp_path / "allreduce.env"
    # the settings advise writes: on this platform recursive doubling up to 64 KiB,
    # Rabenseifner from there (the test fails if the advice stops telling them apart)
    advice = _run(
        "advise", "--mpi", "intel-mpi", "--platform", "nomura2007", "--collective", "allreduce",
        "--ranks", str(HOSTS), "--sizes", "1KiB,1MiB", "--rules", str(settings),
    )  # fmt: skip
    assert advice.returncode == 0, advice.stderr
    env = read_settings(settings)
    items, problems = parse_adjust("allreduce", env["I_MPI_ADJUST_ALLREDUCE"])
    assert problems == []
    sizes = [1024, 1048576]
    picks = [lookup(items, HOSTS, m) for m in sizes]
    assert picks == [1, 2], env
    # alltoall and allgather: sizes are a rank's block, as commodel counts them (a total
    # of P blocks would cross the 4096-byte boundary at 1024 bytes and pick the other)
    alltoall = {"I_MPI_ADJUST_ALLTOALL": adjust_value("alltoall", {HOSTS: [(0, 1), (4096, 2)]})}
    allgather = {"I_MPI_ADJUST_ALLGATHER": adjust_value("allgather", {HOSTS: [(0, 3), (2048, 2)]})}
    # why we write no process ranges: with them this build drops the size ranges and the
    # last item runs at every size (Rabenseifner at 1 KiB here)
    with_procs = {"I_MPI_ADJUST_ALLREDUCE": "1:0-65535@4-4;2:65536-2147483647@4-4"}
    try:
        up = _run("cluster", "up", "--spec", SPEC, "--name", NAME)
        assert up.returncode == 0, up.stderr
        measured, out = _traffic("allreduce", sizes, env, debug=True)
        a2a, _ = _traffic("alltoall", [1024, 65536], alltoall)
        ag, _ = _traffic("allgather", [1024, 65536], allgather)
        quirk, _ = _traffic("allreduce", [1024], with_procs)
    finally:
        down = _run("cluster", "down", "--name", NAME)
    assert down.returncode == 0, down.stderr
    # libfabric's tcp provider carried the messages, over the data NIC
    assert "libfabric provider: tcp" in out and "cm-data" in out, out[-3000:]
    assert "I_MPI_FABRICS=ofi" in out
    for m, number in zip(sizes, picks):
        other = [n for n in picks if n != number][0]
        assert _fits(measured[m], _generator("allreduce", number), m), (m, measured[m])
        assert not _fits(measured[m], _generator("allreduce", other), m), (m, measured[m])
    assert _fits(a2a[1024], "alltoall-modified-bruck", 1024), a2a[1024]
    assert _fits(a2a[65536], "alltoall-basic-linear", 65536), a2a[65536]
    assert not _fits(a2a[1024], "alltoall-basic-linear", 1024), a2a[1024]
    assert _fits(ag[1024], "allgather-ring", 1024), ag[1024]
    assert _fits(ag[65536], "allgather-bruck", 65536), ag[65536]
    assert not _fits(ag[1024], "allgather-bruck", 1024), ag[1024]
    assert _fits(quirk[1024], _generator("allreduce", 2), 1024), quirk[1024]
    assert not _fits(quirk[1024], _generator("allreduce", 1), 1024), quirk[1024]


def test_verify_under_intel_mpi_proves_its_settings_fired(tmp_path):
    """advise --mpi intel-mpi --verify with Intel's mpiexec on 4 emulated hosts: Intel's
    default, our settings and each mapped preset timed (measure collective under Intel MPI,
    the campaigns recording the library and its version), then one call a size under our
    settings whose bytes per peer, as the kernel counted them, are the chosen preset's
    generator's: recursive doubling at 1 KiB, Rabenseifner at 1 MiB (the report's "rules
    fired" and the CSV's ``ran``)."""
    import csv

    from commodel.db import ResultsDB

    db = tmp_path / "v.duckdb"
    launcher = f"{sys.executable} -m commodel cluster mpirun --name {NAME} --hosts {HOSTS} "
    launcher += "--mpirun "
    launcher += f"{IMPI / 'bin' / 'mpiexec'} --"
    env = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "python")}
    env = {k: v for k, v in env.items() if not k.startswith("I_MPI_ADJUST_")}
    try:
        up = _run("cluster", "up", "--spec", SPEC, "--name", NAME)
        assert up.returncode == 0, up.stderr
        proc = subprocess.run(
            [str(IMPI / "bin" / "python"), "-m", "commodel", "advise", "--mpi", "intel-mpi",
             "--platform", "nomura2007", "--collective", "allreduce", "--ranks", str(HOSTS),
             "--sizes", "1KiB,1MiB", "--verify", str(db), "--mpirun", launcher,
             "--min-reps", "2", "--max-reps", "2", "--quiet"],
            capture_output=True, text=True, timeout=900, env=env,
        )  # fmt: skip
    finally:
        down = _run("cluster", "down", "--name", NAME)
    assert down.returncode == 0, down.stderr
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-3000:]
    assert "rules fired: " in proc.stdout and "at 2/2 points" in proc.stdout, proc.stdout
    assert "kernel's TCP byte counts" in proc.stdout
    with open(tmp_path / "v.verify.csv") as handle:
        table = {int(row["size"]): row for row in csv.DictReader(handle)}
    assert [table[m]["chosen"] for m in (1024, 1048576)] == ["1", "2"], table
    for row in table.values():
        assert row["ran"].split() == [row["chosen"]], row  # and not the other preset
    with ResultsDB(str(db), read_only=True) as results:
        campaigns = [c for c in results.campaigns() if c.benchmark == "collective"]
    # Intel's default, our settings, presets 1, 2 and 8, the counted run: each one campaign
    # of Intel MPI 2021.18.1
    assert len(campaigns) == 6, [c.options for c in campaigns]
    assert {c.mpi_library for c in campaigns} == {"Intel(R) MPI Library 2021.18.1 for Linux* OS"}
    forced = sorted(c.options["algorithm"] for c in campaigns if not c.options["rules_file"])
    assert forced == [0, 1, 2, 8]
    ours = [c.options for c in campaigns if c.options["rules_file"]]
    assert len(ours) == 2 and all(o["rules_file"] == str(tmp_path / "v.rules.txt") for o in ours)
    assert ours[0]["settings"] == read_settings(tmp_path / "v.rules.txt")["I_MPI_ADJUST_ALLREDUCE"]
