"""``measure wire`` and its fit: h and a from the bytes the interfaces counted.

The fit's closed form on counts made up from known headers (every frame 66 B of headers,
Open MPI's 22 B a message, 1448 B segments), the platform ``fit`` writes from them, the
cases it declines, and the benchmark under mpirun over loopback (where there is nothing to
count: the fit must say so, not fit noise). On the emulated cluster the counts are real:
tests/test_calibrate_cluster.py.
"""

from __future__ import annotations

import math

import pytest

from commodel.errors import CommodelError
from commodel.fit.wire import overhead_and_ack
from commodel.measure import wire
from mpirun import needs_mpi, run

S_A, C, MSS, MTU = 66, 22, 1448, 1500
STREAM = 32768
FRAMES = math.ceil((STREAM + C) / MSS)  # 23 segments
SENT = STREAM + C + FRAMES * S_A  # 34308 B a message
RHO = SENT / STREAM


def _n_d(m: int) -> int:
    return math.ceil((m + C) / MSS)


def _rows(hosts=("h0", "h1", "h2", "h3"), sizes=(256, 512, 1024, 2048, 4096), acks=0.5):
    """Samples of a wire campaign on 4 nodes: per message the counts above, plus what the
    barriers around the steps send (the same for both step counts)."""
    rows = []

    def add(pattern, m, role, src, per_msg_bytes, per_msg_packets, rep=0):
        for k in wire.STEPS:
            rows.append({
                "phase": "wire", "pattern": pattern, "quantity": "round", "size_bytes": m,
                "n_msgs": k, "repetition": rep, "value_s": k * 90e-6, "src": src,
                "dst": (src + 1) % 4, "hosts": hosts[src],
                "extra": {"tx_bytes": round(k * per_msg_bytes) + 700 + src,
                          "tx_packets": round(k * per_msg_packets) + 9, "role": role,
                          "mtu": MTU},
            })  # fmt: skip

    for src in (0, 2):
        add("stream", STREAM, "send", src, SENT, FRAMES)
    for src in (1, 3):  # pure acknowledgements: one every second segment
        add("stream", STREAM, "ack", src, 11.5 * S_A, 11.5)
    for m in sizes:
        packets = _n_d(m) + acks
        for src in range(4):
            add("ring", m, "ring", src, m + C + packets * S_A, packets)
    return rows


def test_h_and_a_from_counted_bytes():
    h, a, note = overhead_and_ack(_rows())
    # h(m) = (m + c + n_d s_a) / rho - m: 72.6, 61.1, 38.1, 55.2, 26.2 B; a(m) = 0.5 s_a / rho
    hs = sorted((m + C + _n_d(m) * S_A) / RHO - m for m in (256, 512, 1024, 2048, 4096))
    assert h == round(hs[2]) == 55
    assert a == round(0.5 * S_A / RHO) == 32
    assert "s_a = 66 B of headers a frame, 1.0470 frame bytes a payload byte" in note
    assert "1024 B 1145 B in 1.50 frames (c 22 B, 0.50 acks) a step of 90 us" in note


def test_acknowledgements_are_the_packets_beyond_the_data_frames():
    h, a, _ = overhead_and_ack(_rows(acks=1.5))
    assert a == round(1.5 * S_A / RHO) == 95
    assert h == 55  # the data direction is unchanged


def test_one_host_or_no_ring_is_not_fitted():
    h, a, note = overhead_and_ack(_rows(hosts=("h0",) * 4))
    assert (h, a) == (None, None) and "ran on one host" in note
    h, a, note = overhead_and_ack([r for r in _rows() if r["pattern"] != "ring"])
    assert (h, a) == (None, None) and "no ring on 3 nodes" in note


def test_options():
    assert wire.validate_options({})["sizes"] == [256, 512, 1024, 2048, 4096]
    with pytest.raises(CommodelError, match="--sizes must be increasing"):
        wire.validate_options({"sizes": [1024, 512]})
    with pytest.raises(CommodelError, match="--reps must be >= 1"):
        wire.validate_options({"reps": 0})
    with pytest.raises(CommodelError, match="--interfaces: not interface names"):
        wire.validate_options({"interfaces": ["../x"]})
    assert wire.rounds(wire.validate_options({"reps": 2}), 2) == [
        ("stream", STREAM, 0), ("stream", STREAM, 1)
    ]  # fmt: skip
    assert len(wire.rounds(wire.validate_options({}), 3)) == 3 * 6


def test_fit_writes_them_into_the_network_section(tmp_path, cli):
    from commodel.db import ResultsDB
    from commodel.platform import load_platform
    from test_fit_tree import _samples

    path = tmp_path / "w.duckdb"
    hosts = ["h0", "h1", "h2", "h3"]
    with ResultsDB(path) as db:
        camp = db.create_campaign("tree", "test", {}, hosts, "Open MPI", "5")
        rows = _samples(4, [1e8, 2e8], [1e-4, 2e-4], 1e-5)
        db.write_step(camp, [{**r, "step": "bursts", "benchmark": "tree"} for r in rows])
        db.set_status(camp, "complete")
        camp = db.create_campaign("wire", "test", {}, hosts, "Open MPI", "5")
        db.write_step(camp, [{**r, "step": "w", "benchmark": "wire"} for r in _rows()])
        db.set_status(camp, "complete")
    out = tmp_path / "p.yaml"
    res = cli("fit", "--db", path, "-o", out)
    assert res.code == 0, res.err
    plat = load_platform(str(out))
    assert (plat.network.overhead, plat.network.ack) == (55, 32)
    assert "overhead 55 B, ack 32 B: medians of h(m), a(m)" in out.read_text()


@pytest.mark.mpi
@needs_mpi
def test_measure_wire_on_three_ranks_over_loopback(tmp_path):
    db = str(tmp_path / "w.duckdb")
    res = run(3, "measure", "wire", "--db", db, "--sizes", "1KiB", "--stream-size", "4KiB",
              "--reps", "1", "--quiet")  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert "campaign 1: 2 rounds on 3 nodes" in res.stdout
    assert "not fitted (the wire campaign ran on one host" in res.stdout
    from commodel.db import ResultsDB

    with ResultsDB(db, read_only=True) as handle:
        rows = handle.samples(1)
    # ring: 3 nodes x 2 step counts; stream: one pair (the third node is the odd one out)
    assert sorted((r["pattern"], r["extra"]["role"]) for r in rows) == sorted(
        [("ring", "ring")] * 6 + [("stream", "send")] * 2 + [("stream", "ack")] * 2
    )
    ring = [r for r in rows if r["pattern"] == "ring"]
    assert {(r["src"], r["dst"]) for r in ring} == {(0, 1), (1, 2), (2, 0)}
    assert all(r["value_s"] > 0 for r in rows)


def test_interfaces_counted_are_the_physical_ones(tmp_path):
    """A bond, bridge, VLAN or ifb on top of a physical interface counts its bytes again:
    where the host has physical interfaces only they are counted; in a network namespace
    (veths only) every interface but lo."""
    net = tmp_path / "class" / "net"
    net.mkdir(parents=True)

    def device(name, where):
        d = tmp_path / "devices" / where / "net" / name
        (d / "statistics").mkdir(parents=True)
        (net / name).symlink_to(d)

    for name, where in (("lo", "virtual"), ("ifb0", "virtual"), ("eth0", "pci0/virtio2")):
        device(name, where)
    (net / "bonding_masters").write_text("")  # a file in class/net, not an interface
    assert wire.interfaces(None, str(net)) == ["eth0"]
    (net / "eth0").unlink()
    assert wire.interfaces(None, str(net)) == ["ifb0"]
    assert wire.interfaces(["ifb0"], str(net)) == ["ifb0"]
    with pytest.raises(CommodelError, match="--interfaces: no interface eth9"):
        wire.interfaces(["eth9"], str(net))
    assert wire.interfaces(None, str(tmp_path / "none")) == []
