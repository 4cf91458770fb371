"""`maxmin` against SimGrid: benches/simgrid_flows.py and our s4u program benches/simgrid/flows.cpp.

The comparison itself runs everywhere; the side-by-side runs need g++ and SimGrid
(Debian's libsimgrid-dev) and are skipped without them. The program is built once into
bench-out/simgrid (rebuilt when its source changes).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import commodel

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benches"))

import contention  # noqa: E402
import simgrid_flows  # noqa: E402

SIMGRID_OUTPUT = """rank 0 1.000000000000e-02
rank 1 2.000000000000e-02
makespan 2.000000000000e-02
message 0 1 5 8 0.000000000000e+00 1.000000000000e-02
message 1 0 5 8 0.000000000000e+00 2.000000000000e-02
"""


def _prediction(shift: float):
    rank = commodel.RankFinish
    msg = commodel.Message
    return commodel.Prediction(
        model="maxmin",
        makespan_s=0.02,
        ranks=[rank(0, 0.01), rank(1, 0.02)],
        messages=[msg(0, 1, 8, 5, 0.0, 0.01 + shift), msg(1, 0, 8, 5, 0.0, 0.02)],
    )


def test_compare_finds_the_largest_relative_difference():
    assert simgrid_flows.compare(_prediction(0.0), SIMGRID_OUTPUT, True) == (0.0, 5)
    worst, count = simgrid_flows.compare(_prediction(1e-8), SIMGRID_OUTPUT, True)
    assert count == 5
    assert worst == pytest.approx(1e-8 / (0.01 + 1e-8), rel=1e-9)
    # Without messages only the makespan and the ranks' finishes are compared.
    assert simgrid_flows.compare(_prediction(1e-8), SIMGRID_OUTPUT, False) == (0.0, 3)


def test_platform_xml_routes_between_racks_through_both_uplinks():
    xml = simgrid_flows.platform_xml(contention.platform(16))
    assert 'radical="0-7"' in xml and 'radical="8-15"' in xml
    assert 'bw="125000000.0Bps" lat="1e-05s"' in xml
    assert xml.count("<zoneRoute ") == 2
    assert (
        '<link_ctn id="uplink1" direction="UP"/>\n    <link_ctn id="uplink0" direction="DOWN"/>'
        in xml
    )
    with pytest.raises(ValueError, match="racks"):
        simgrid_flows.platform_xml({"network": {"topology": "crossbar"}})


@pytest.fixture(scope="module")
def flows():
    binary, why = simgrid_flows.build(ROOT / "bench-out" / "simgrid")
    if binary is None:
        pytest.skip(f"no SimGrid side by side: {why}")
    return binary


@pytest.mark.parametrize(
    "algorithm", ["alltoall-xor-pairwise", "alltoall-xor-post-all", "alltoall-basic-linear"]
)
def test_maxmin_equals_simgrid_on_two_racks(flows, tmp_path, algorithm):
    """16 ranks on two racks whose uplinks carry a quarter of a rack's NICs: the makespan,
    every rank's finish and every message's end agree with SimGrid's CM02 (exact update)."""
    goal, plat, xml = tmp_path / "s.goal", tmp_path / "p.yaml", tmp_path / "p.xml"
    commodel.write_goal(commodel.collective(algorithm, 16, 65536), goal)
    plat.write_text(json.dumps(contention.platform(16)))
    xml.write_text(simgrid_flows.platform_xml(contention.platform(16)))
    run = subprocess.run(
        [str(flows), str(xml), str(goal), "--messages", "--cfg=network/optim:Full"],
        capture_output=True,
        text=True,
        check=True,
    )
    pred = commodel.predict(goal, str(plat), "maxmin")
    worst, count = simgrid_flows.compare(pred, run.stdout, True)
    assert count == 1 + 16 + 16 * 15
    assert worst < 1e-9


# `irequires` with and without dependencies of its own: rank 0's `c` starts when `b` starts,
# i.e. when `a` completes; rank 1's `s` and rank 0's `e` start at 0 with `r` and `d`.
IREQUIRES = (
    """num_ranks 10
rank 0 {
a: send 65536b to 1 tag 1
b: send 65536b to 2 tag 2
b requires a
c: send 65536b to 9 tag 3
c irequires b
d: recv 65536b from 1 tag 4
e: send 1000b to 9 tag 5
e irequires d
}
rank 1 {
r: recv 65536b from 0 tag 1
s: send 65536b to 0 tag 4
s irequires r
}
rank 2 {
r: recv 65536b from 0 tag 2
}
"""
    + "".join(f"rank {i} {{\n}}\n" for i in range(3, 9))
    + """rank 9 {
r: recv 65536b from 0 tag 3
q: recv 1000b from 0 tag 5
q requires r
}
"""
)


def test_irequires_starts_with_the_operation_it_names(flows, tmp_path):
    goal, plat, xml = tmp_path / "s.goal", tmp_path / "p.yaml", tmp_path / "p.xml"
    goal.write_text(IREQUIRES)
    plat.write_text(json.dumps(contention.platform(16)))
    xml.write_text(simgrid_flows.platform_xml(contention.platform(16)))
    run = subprocess.run(
        [str(flows), str(xml), str(goal), "--messages"], capture_output=True, text=True, check=True
    )
    pred = commodel.predict(goal, str(plat), "maxmin")
    # 0 -> 2 starts when 0 -> 1 has arrived: 20 us of latency, then 65536 B at 125 MB/s but
    # for the 1000 B to rank 9 (from 40 us, weight 40 us against 20 us: a third of node 0's
    # link for 24 us), which delays it by 8 us.
    assert [m.start_s for m in pred.messages if m.dst == 2] == [pytest.approx(552.288e-6)]
    assert simgrid_flows.compare(pred, run.stdout, True) == (0.0, 1 + 10 + 5)


def test_unsupported_statements_are_named_with_file_and_line(flows, tmp_path):
    goal, xml = tmp_path / "s.goal", tmp_path / "p.xml"
    goal.write_text("num_ranks 2\nrank 0 {\nc: calc 100\n}\nrank 1 {\n}\n")
    xml.write_text(simgrid_flows.platform_xml(contention.platform(2)))
    run = subprocess.run([str(flows), str(xml), str(goal)], capture_output=True, text=True)
    assert run.returncode == 2
    assert f"flows: {goal}:3: unsupported statement" in run.stderr
