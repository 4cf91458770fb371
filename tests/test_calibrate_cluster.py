"""``commodel calibrate`` on the emulated two-rack-8 cluster (root; about 1 minute).

Four hosts of one rack (``cluster mpirun --hosts 4``), parts tcp, plogp (up to 64 KiB), tree,
efficiency and wire: the fitted platform must hold what the cluster was built with: the RTO_min
of its spec, the 100 Mbit/s NICs (per flow, b(h) / 2^(h-1) at every height of one rack, at
the TCP payload ceiling within the measurement's noise), g(m) growing at the NIC's byte
time, and the exchange penalty of rendezvous-sized messages (study). Brings its own
cluster (``cmcaltest``) up and always down.
"""

from __future__ import annotations

import os
import sys

import pytest

from test_validate_cluster import ROOT, UNAVAILABLE, _commodel

SPEC = os.path.join(ROOT, "examples", "clusters", "two-rack-8.yaml")
NAME = "cmcaltest"
NIC_BYTES_PER_S = 100e6 / 8
PAYLOAD = 1448 / 1538  # TCP payload per 1500-byte frame on the wire (timestamps on)


@pytest.mark.cluster
@pytest.mark.mpi
@pytest.mark.skipif(UNAVAILABLE is not None, reason=UNAVAILABLE or "")
def test_calibrate_on_one_rack_of_two_rack_8(tmp_path):
    from commodel.platform import load_platform

    db, out = str(tmp_path / "cal.duckdb"), str(tmp_path / "platform.yaml")
    try:
        up = _commodel("cluster", "up", "--spec", SPEC, "--name", NAME)
        assert up.returncode == 0, up.stderr
        run = _commodel(
            "cluster", "mpirun", "--name", NAME, "--hosts", "4", "--",
            sys.executable, "-m", "commodel", "calibrate", "--db", db, "-o", out,
            "--parts", "tcp,plogp,tree,efficiency,wire", "--max-size", "64KiB",
            timeout=600,
        )  # fmt: skip
        assert run.returncode == 0, run.stderr + run.stdout
        assert "calibrate: 4 ranks" in run.stderr
        assert "--buffer" not in run.stderr  # nothing reads the cluster's spec
    finally:
        down = _commodel("cluster", "down", "--name", NAME)
    assert down.returncode == 0, down.stderr
    plat = load_platform(out)
    assert plat.tcp.rto == pytest.approx(0.2)  # the spec's rto_min_ms: 200
    assert plat.network.nodes == 4
    payload_rate = NIC_BYTES_PER_S * PAYLOAD
    # b(h) is the bandwidth of a tree edge at height h, which 2^(h-1) flows cross at once
    # in PlogPT's burst; inside one switch nothing is shared, so each flow gets its NIC
    for h, b in enumerate(plat.network.unidirectional.b, start=1):
        per_flow = b / 2 ** (h - 1)
        assert 0.80 * payload_rate <= per_flow <= 1.05 * NIC_BYTES_PER_S, plat.network
    sizes, g = plat.plogp.sizes, plat.plogp.g
    assert list(g) == sorted(g)  # written as its non-decreasing fit
    # from 16 KiB to 64 KiB g(m) grows by about the NIC's time for the 48 KiB between
    i16, i64 = sizes.index(16384), sizes.index(65536)
    slope = (g[i64] - g[i16]) / (65536 - 16384)
    assert 0.8 / payload_rate <= slope <= 1.5 / payload_rate, (slope, 1 / payload_rate)
    # the token bucket of the host ports (tbf, burst 3125 B: two frames of 1514 B and a
    # little): a lone message passes its first ~2.8 kB at once, which PLogP's g(m) shows
    # from 4 KiB on (2565-3066 B over the 15 calibrations in study). The floor is
    # lower: B is where g(m) of 4-64 KiB extrapolates to 0, so 100 us more in all those
    # round trips (a busy machine) moves it by b x 100 us = 1.2 kB; one CI run fitted
    # 1486 B (with the median that fit.bucket took before). No bucket gives None.
    with open(out) as handle:
        comments = [line for line in handle if line.startswith("#")]
    note = [line for line in comments if line.startswith("# bucket:")]
    assert plat.network.bucket is not None and 1200 <= plat.network.bucket <= 3125, note
    eff = plat.tcp.efficiency
    # a failure shows the fit's comments, each size's mean times beside e_x, e_d and e_f:
    # one CI-like run on 2026-11-27 found e_x(64 KiB) = 1.0, e_d(16 KiB) 0.46 and e_f(64
    # KiB) 0.13 and printed no times; five runs later that day 0.62-0.82, 0.80-0.95 and
    # 0.22-0.65
    times = [line for line in comments if line.startswith(("# efficiency", "# fanin"))]
    assert eff.sizes == (4096, 16384, 65536)
    assert all(0 < e <= 1 for e in eff.exchange + eff.duplex), times
    assert eff.exchange[-1] < 0.9, (eff, times)
    # fan-in: all-to-all rounds of the 4 nodes at 4 KiB doubling to 64 KiB, fitted through
    # tcpflow with the sections above; the comment gives each size's median and e_f
    assert eff.fanin is not None and eff.fanin.peers == 3, (eff, times)
    assert eff.fanin.sizes == (4096, 8192, 16384, 32768, 65536)
    assert any(
        "fanin: all-to-all rounds of 4 nodes, median round time and e_f: 4096 B" in line
        for line in times
    ), times
    # wire: counted by the hosts' interfaces, a lone message of 256 B..4 KiB puts its
    # 22 B of Open MPI headers and 66 B of headers a frame on the wire (h, in units of b:
    # 26-73 B, a median near 55 B) and every second one draws a 66 B acknowledgement
    # (a = 33 B / rho); a frame more or less in a ring moves a by 63 B
    assert 35 <= plat.network.overhead <= 80, plat.network
    assert 20 <= plat.network.ack <= 50, plat.network
    with open(out) as handle:
        assert "s_a = 66 B of headers a frame" in handle.read()
