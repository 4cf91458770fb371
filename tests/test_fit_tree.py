"""Binary-tree fit (PlogPT b(h), d(h), P_S) on synthetic samples and on the paper's Table II."""

from __future__ import annotations

import pytest

from commodel.errors import CommodelError
from commodel.fit import tree as T

# PlogPT Table II (unidirectional): d(h) [us] and b(h)/2^(h-1) [Mbps], h = 1..5
TABLE2_D = [500e-6, 517e-6, 535e-6, 527e-6, 543e-6]
TABLE2_B = [x * 1e6 / 8 * 2**h for h, x in enumerate([936.4, 935.6, 936.1, 934.1, 625.0])]


def test_switch_heights_of_table2():
    # heights 1-4 scale with 2^(h-1) and keep d: no switch boundary until the drop at 5
    assert T.switch_heights(TABLE2_B, TABLE2_D, 0.05) == [1, 5]
    # a tighter eps_S also sees the 3.5% change of d between heights 1 and 3
    assert T.switch_heights(TABLE2_B, TABLE2_D, 1e-4) == [1, 2, 3, 4, 5]
    assert T.p_s(1.0, 1e-4, 2.0, 1e-4, 1, 0.01) is False
    assert T.p_s(1.0, 1e-4, 1.0, 1e-4, 1, 0.01)  # log(2)^2 = 0.48 > 0.01
    # delays below 1 us are noise: 0 and 0.5 us are the same delay for P_S
    assert T.p_s(1.0, 0.0, 2.0, 0.5e-6, 1, 0.01) is False
    assert T.p_s(1.0, 0.0, 2.0, 6e-6, 1, 0.01)


def _samples(nodes, b, d_load, d_idle, bidirectional=True):
    """Samples whose fit is b(h) (per subtree and direction) and d(h) exactly."""
    out = []
    m, n = 1 << 20, 4
    pats = ["uni", "bi"] if bidirectional else ["uni"]
    for h in range(1, nodes.bit_length()):
        flows = nodes // 2
        for pattern in pats:
            per_dir = 2 if pattern == "bi" else 1
            for rep in range(3):
                # every flow gets an equal share of the subtree's b(h)
                subtrees = nodes >> h
                bw = b[h - 1] * subtrees * per_dir / (flows * per_dir)
                for _f in range(flows * per_dir):
                    out.append(
                        {
                            "phase": f"h={h}",
                            "pattern": pattern,
                            "quantity": "burst",
                            "size_bytes": m,
                            "n_msgs": n,
                            "n_ranks": nodes,
                            "repetition": rep,
                            "value_s": m * n / bw,
                        }
                    )
                for i in range(5):
                    load = d_idle + d_load[h - 1] * (per_dir if pattern == "bi" else 1)
                    out.append(
                        {
                            "phase": f"h={h}",
                            "pattern": pattern,
                            "quantity": "pingpong",
                            "size_bytes": 1,
                            "n_msgs": 1,
                            "n_ranks": nodes,
                            "repetition": rep * 5 + i,
                            "value_s": load,
                        }
                    )
            for i in range(5):
                out.append(
                    {
                        "phase": f"h={h}",
                        "pattern": "idle",
                        "quantity": "pingpong",
                        "size_bytes": 1,
                        "n_msgs": 1,
                        "n_ranks": nodes,
                        "repetition": i,
                        "value_s": d_idle,
                    }
                )
    return out  # fmt: skip


def test_fit_recovers_b_and_d():
    b = [100e6, 150e6, 160e6]
    d = [1e-4, 2e-4, 2e-4]
    fit = T.fit_tree(_samples(8, b, d, 30e-6), {"bidirectional": True})
    assert fit.nodes == 8
    assert fit.uni["b"] == pytest.approx(b)
    assert fit.uni["d"] == pytest.approx(d)
    assert fit.bi["b"] == pytest.approx(b)
    assert fit.bi["d"] == pytest.approx(d)  # half of the doubled ping-pong increase
    sec = T.network_section(fit)
    assert sec["topology"] == "binary-tree" and sec["nodes"] == 8
    # 2*100/150 and 2*150/160 are both far from 1: boundaries at heights 2 and 3
    assert "switches inferred at heights [1, 2, 3]" in T.format_table(fit)
    full = T.fit_tree(_samples(8, [1e8, 2e8, 4e8], [1e-4] * 3, 30e-6), {})
    assert full.switch_heights() == [1]  # full bisection bandwidth, same delay: one switch


def test_b_is_capped_at_twice_the_height_below():
    fit = T.fit_tree(_samples(4, [100e6, 500e6], [0, 0], 1e-5, False), {"bidirectional": False})
    assert fit.raw_b["uni"] == pytest.approx([100e6, 500e6])
    assert fit.uni["b"] == pytest.approx([100e6, 200e6])
    assert fit.bi is None


def test_negative_d_is_floored_and_missing_data_is_an_error():
    s = _samples(2, [1e8], [-5e-6], 1e-5, False)
    assert T.fit_tree(s, {"bidirectional": False}).uni["d"] == [0.0]
    with pytest.raises(CommodelError, match="no samples"):
        T.fit_tree([], {})
    with pytest.raises(CommodelError, match="no bi burst samples at height 1"):
        T.fit_tree(s, {"bidirectional": True})


def test_network_section_loads_as_a_platform(tmp_path):
    from commodel.fit import yamlout
    from commodel.platform import load_platform

    fit = T.fit_tree(_samples(4, [1e8, 2e8], [1e-4, 2e-4], 1e-5), {})
    doc = {"commodel_platform": 1, "name": "t", "nodes": 4, "network": T.network_section(fit)}
    path = tmp_path / "t.yaml"
    path.write_text(yamlout.dump(doc))
    plat = load_platform(str(path))
    assert plat.network.unidirectional.b == pytest.approx((1e8, 2e8))
    assert plat.network.bidirectional.d == pytest.approx((1e-4, 2e-4))


def _tree_db(tmp_path, with_tcp: bool):
    """A results database with a complete tree campaign (b = 1e8, 2e8 B/s on 4 nodes) and,
    if asked, a tcp campaign (RTO_min 200 ms)."""
    from commodel.db import ResultsDB

    path = tmp_path / "tree.duckdb"
    with ResultsDB(path) as db:
        hosts = ["h0", "h1", "h2", "h3"]
        camp = db.create_campaign("tree", "test", {}, hosts, "Open MPI", "5")
        rows = _samples(4, [1e8, 2e8], [1e-4, 2e-4], 1e-5)
        db.write_step(camp, [{**r, "step": "bursts", "benchmark": "tree"} for r in rows])
        db.set_status(camp, "complete")
        if with_tcp:
            camp = db.create_campaign("tcp", "test", {}, hosts, "Open MPI", "5")
            rows = [{"step": "settings", "benchmark": "tcp", "phase": "settings",
                     "quantity": "rto_min", "value_s": 0.2, "src": r,
                     "extra": {"source": "test", "congestion_control": "cubic"}}
                    for r in range(4)]  # fmt: skip
            db.write_step(camp, rows)
            db.set_status(camp, "complete")
    return path


def test_fit_writes_the_buffers_it_is_given(tmp_path, cli):
    from commodel.platform import load_platform

    db = _tree_db(tmp_path, with_tcp=True)
    out = tmp_path / "p.yaml"
    res = cli("fit", "--db", db, "--buffer", "32KiB,128KiB", "-o", out)
    assert res.code == 0, res.err
    plat = load_platform(str(out))
    assert plat.network.buffer == (32768, 131072)
    assert plat.tcp.rto_rule == "buffer"
    assert "not measured" in out.read_text()
    res = cli("fit", "--db", db, "--buffer", "32KiB", "-o", out)
    assert res.code == 0, res.err
    assert load_platform(str(out)).network.buffer == (32768, 32768)
    # without --buffer: no buffer, eq. 14's rule
    res = cli("fit", "--db", db, "-o", out)
    plat = load_platform(str(out))
    assert plat.network.buffer is None and plat.tcp.rto_rule == "plogpt"


@pytest.mark.parametrize(
    ("buffer", "problem"),
    [("1KiB,2KiB,3KiB", "one per height h = 1..2 of the fitted network, got 1024,2048,3072"),
     ("0", "one size > 0 bytes"), ("lots", "--buffer: cannot read 'lots'")],
)  # fmt: skip
def test_fit_bad_buffer_exits_2(tmp_path, cli, buffer, problem):
    res = cli("fit", "--db", _tree_db(tmp_path, with_tcp=False), "--buffer", buffer)
    assert res.code == 2
    assert problem in res.err and "Traceback" not in res.err


def test_fit_buffer_needs_a_network(tmp_path, cli):
    from commodel.db import ResultsDB

    path = tmp_path / "tcp.duckdb"
    with ResultsDB(path) as db:
        camp = db.create_campaign("tcp", "test", {}, ["h0"], "Open MPI", "5")
        db.write_step(camp, [{"step": "settings", "benchmark": "tcp", "phase": "settings",
                              "quantity": "rto_min", "value_s": 0.2, "src": 0,
                              "extra": {}}])  # fmt: skip
        db.set_status(camp, "complete")
    res = cli("fit", "--db", path, "--buffer", "32KiB")
    assert res.code == 2
    assert "--buffer: no network section" in res.err
