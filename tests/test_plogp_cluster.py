"""Kielmann's two ways of measuring PLogP's gap g(m), on the emulated Ethernet (root; about a
minute).

``measure plogp --method saturation --sizes 1KiB,4KiB,16KiB,32KiB`` between two hosts of
one rack of two-rack-8 with ``shaping: serialize`` (every frame at line rate; the switch
stores and forwards), below Open MPI's TCP eager limit:

* saturation measures the spacing of back-to-back messages: the wire time of their frames
  at the NIC rate;
* the fast method measures g(m) = RTT(m) - RTT(0) + g(0), the time a lone message takes
  through the path beyond an empty one's. Through a store-and-forward switch the message's
  first frame crosses the switch port only after it has wholly arrived: one frame time more
  than the spacing, which PLogP's constant L cannot hold, so the two methods part by up to
  a frame time (docs/cluster.md, "PLogP's two methods"). A token bucket shows neither: it
  lets a lone message through at once (the fast method saw 11 us for 1 KiB there).

Round trips are taken at their shortest (``--statistic min``): on a shared 2-core machine
scheduling only adds time. Brings its own cluster (``cmplogpsf``) up and always down.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from test_validate_cluster import ROOT, UNAVAILABLE, _commodel

SIZES = (1024, 4096, 16384, 32768)
RATE = 100e6  # two-rack-8's NICs and switch ports toward hosts
NAME = "cmplogpsf"


@pytest.mark.cluster
@pytest.mark.mpi
@pytest.mark.skipif(UNAVAILABLE is not None, reason=UNAVAILABLE or "")
def test_saturation_sees_the_wire_and_the_fast_method_the_store_and_forward_hop(tmp_path):
    from commodel.cluster.wire import segments, wire_bytes
    from commodel.db import ResultsDB
    from commodel.fit.plogp import fit_plogp

    spec = tmp_path / "serial.yaml"
    text = (Path(ROOT) / "examples" / "clusters" / "two-rack-8.yaml").read_text()
    spec.write_text(text + "shaping: serialize\n")
    db = tmp_path / "plogp.duckdb"
    try:
        up = _commodel("cluster", "up", "--spec", str(spec), "--name", NAME)
        assert up.returncode == 0, up.stderr
        run = _commodel(
            "cluster", "mpirun", "--name", NAME, "--hosts", "2", "--",
            sys.executable, "-m", "commodel", "measure", "plogp", "--db", str(db),
            "--method", "saturation", "--sizes", ",".join(map(str, SIZES)),
            "--statistic", "min", "--quiet",
            timeout=600,
        )  # fmt: skip
        assert run.returncode == 0, run.stderr + run.stdout
    finally:
        down = _commodel("cluster", "down", "--name", NAME)
    assert down.returncode == 0, down.stderr
    with ResultsDB(db, read_only=True) as rdb:
        (camp,) = rdb.campaigns()
        fit = fit_plogp(rdb.samples(camp.id), camp.options, camp.ranks)
    assert fit.sizes == [0, *SIZES]
    for m, fast, saturation in zip(SIZES, fit.g_fast[1:], fit.g_saturation[1:]):
        wire = sum(wire_bytes(p) for p in segments(m)) * 8 / RATE
        # back to back, every frame at the NIC rate: within 2% (measured within 0.5%)
        assert 0.99 * wire <= saturation <= 1.02 * wire, (m, saturation, wire)
        # a lone message: its first frame a second time at the switch port, less what the
        # empty message pays there too (measured 74-89 us more at 1 KiB, 100-146 us at
        # 4 KiB, 139-242 us at 16 and 32 KiB, against 91 and 123 us of first frame)
        first = wire_bytes(segments(m)[0]) * 8 / RATE
        assert fast - saturation >= 0.5 * first, (m, fast, saturation, first)
