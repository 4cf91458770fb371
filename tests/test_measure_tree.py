"""``measure tree`` under mpirun over loopback TCP (2 and 4 ranks), then fit."""

from __future__ import annotations

import re

import pytest

from mpirun import commodel, needs_mpi, run

pytestmark = [pytest.mark.mpi, needs_mpi]

duckdb = pytest.importorskip("duckdb")

SMALL = [
    "--burst-size",
    "256KiB",
    "--burst-bytes",
    "2MiB",
    "--reps",
    "2",
    "--pings",
    "10",
    "--quiet",
]


@pytest.mark.parametrize("ranks", [2, 4])
def test_tree_measure_and_fit(ranks, tmp_path):
    db = tmp_path / "r.duckdb"
    res = run(ranks, "measure", "tree", "--db", str(db), *SMALL)
    assert res.returncode == 0, res.stderr
    depth = ranks.bit_length() - 1
    rows = [line for line in res.stdout.splitlines() if re.match(r"^\s+\d+ \|", line)]
    assert len(rows) == depth
    out = tmp_path / "p.yaml"
    res = commodel("fit", "--db", str(db), "-o", str(out))
    assert res.returncode == 0, res.stderr
    from commodel.platform import load_platform

    net = load_platform(str(out)).network
    assert net.nodes == ranks
    for levels in (net.unidirectional, net.bidirectional):
        assert len(levels.b) == depth and all(b > 1e6 for b in levels.b)  # > 1 MB/s on loopback
        assert all(d >= 0 for d in levels.d)
    with duckdb.connect(str(db), read_only=True) as con:
        # per height and repetition: one burst sample per receiving rank
        per = con.execute(
            "SELECT phase, pattern, repetition, count(*) FROM samples WHERE quantity = 'burst' "
            "GROUP BY ALL ORDER BY ALL"
        ).fetchall()
    for phase, pattern, _, count in per:
        assert count == (ranks // 2 if pattern == "uni" else ranks), (phase, pattern)
    assert len(per) == depth * 2 * 2


def test_tree_needs_a_power_of_two(tmp_path):
    res = run(3, "measure", "tree", "--db", str(tmp_path / "r.duckdb"), *SMALL)
    assert res.returncode == 2
    assert "power of two ranks" in res.stderr and "Traceback" not in res.stderr
