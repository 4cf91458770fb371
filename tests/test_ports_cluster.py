"""``measure ports`` against emulated switch ports of known size (root; about 2 minutes).

Two one-switch clusters of 9 hosts at 50 Mbit/s that differ only in the buffer of the
port toward a host: 16 KiB and 4 MiB. Eight hosts burst m bytes each into the ninth, m
doubling from 16 KiB to 256 KiB. The small port must drop tails that TCP recovers only by
a timeout in some round (the held-out study's probes timed out on 18-29 KiB ports from
64-128 KiB on; whether half of a size's rounds do varies from run to run: with 5 senders
one full make test saw none); the port that holds every burst must see none. Each cluster
is brought up by the test (``cmport16k``, ``cmport4m``) and always down.
"""

from __future__ import annotations

import sys

import pytest
import yaml

from test_validate_cluster import UNAVAILABLE, _commodel


def _spec(tmp_path, name: str, port: str) -> str:
    spec = {
        "commodel_cluster": 1,
        "name": name,
        "hosts": 9,
        "topology": {"type": "racks", "racks": [9], "backbone_rate": "100Mbit"},
        "nic_rate": "50Mbit",
        "buffers": {"host_nic": "1MiB", "switch_port": port, "backbone_port": "1MiB"},
        "tcp": {"congestion_control": "cubic", "rto_min_ms": 200},
        "mtu": 1500,
        "shaping": "tbf",
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec))
    return str(path)


def _probe(tmp_path, name: str, port: str) -> tuple[dict, dict | None]:
    """The TCP timeouts the senders' hosts counted per probe and size, summed over the
    rounds, and the fitted tcp.timeouts."""
    import json

    from commodel.db import ResultsDB
    from commodel.fit.ports import timeouts_section

    db = str(tmp_path / f"{name}.duckdb")
    try:
        up = _commodel("cluster", "up", "--spec", _spec(tmp_path, name, port), "--name", name)
        assert up.returncode == 0, up.stderr
        run = _commodel(
            "cluster", "mpirun", "--name", name, "--",
            sys.executable, "-m", "commodel", "measure", "ports", "--db", db, "--quiet",
            "--min-size", "16KiB", "--max-size", "256KiB", "--reps", "3",
            timeout=600,
        )  # fmt: skip
        assert run.returncode == 0, run.stderr + run.stdout
    finally:
        down = _commodel("cluster", "down", "--name", name)
    assert down.returncode == 0, down.stderr
    with ResultsDB(db, read_only=True) as results:
        camp = results.campaigns()[-1]
        samples = [s for s in results.samples(camp.id) if s["quantity"] == "burst"]
    # one switch: no rack uplink probe
    assert {s["pattern"] for s in samples} == {"host", "alltoall"}
    counted: dict[tuple[str, int], int] = {}
    for s in samples:
        extra = s["extra"] if isinstance(s["extra"], dict) else json.loads(s["extra"])
        key = (s["pattern"], int(s["size_bytes"]))
        counted[key] = counted.get(key, 0) + extra["timeouts"]
    return counted, timeouts_section(samples)[0]


@pytest.mark.cluster
@pytest.mark.mpi
@pytest.mark.slow
@pytest.mark.skipif(UNAVAILABLE is not None, reason=UNAVAILABLE or "")
def test_a_small_port_times_out_and_a_large_one_does_not(tmp_path):
    small, small_rule = _probe(tmp_path, "cmport16k", "16KiB")
    large, large_rule = _probe(tmp_path, "cmport4m", "4MiB")
    host = {m: n for (p, m), n in small.items() if p == "host"}
    assert sum(host.values()) > 0, f"16 KiB port, no timeout at any size: {small}"
    assert sum(large.values()) == 0, f"4 MiB port timed out: {large}"
    # fit: 8 senders into a node time out from some size on at the small port only
    assert small_rule is not None and small_rule[0]["senders"] == 8, small_rule
    assert large_rule is None, large_rule
