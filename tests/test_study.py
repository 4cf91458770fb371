"""The held-out study's draws and workloads, without a cluster (the cluster run is
tests/test_study_cluster.py)."""

from __future__ import annotations

import pytest

from commodel.cluster.spec import parse_rate_bits, parse_spec
from commodel.measure import collective, pattern
from commodel.study import specs, workload


def _rate_mbit(text: str) -> float:
    return parse_rate_bits(text) / 1e6


@pytest.mark.parametrize("seed", [3, 77, 2026])
def test_draws_are_valid_specs_within_issue_38s_ranges(seed):
    for index in range(25):
        spec = specs.draw_spec(seed, index)
        assert spec == specs.draw_spec(seed, index)  # a seed and an index are one spec
        parse_spec(spec, f"draw {index}")  # the cluster loader takes it
        hosts = spec["hosts"]
        assert specs.MIN_HOSTS <= hosts <= specs.MAX_HOSTS
        for key in ("switch_port", "backbone_port"):
            assert specs.MIN_BUFFER - 1024 <= spec["buffers"][key] <= specs.MAX_BUFFER
        topo = spec["topology"]
        if topo["type"] == "racks":
            assert 1 <= len(topo["racks"]) <= 4 and sum(topo["racks"]) == hosts
            assert min(topo["racks"]) >= 1
            nic = _rate_mbit(spec["nic_rate"])
            backbone = _rate_mbit(topo["backbone_rate"])
            assert 0.5 * nic - 1 <= backbone <= 3 * nic + 1
        else:
            assert topo["type"] == "binary-tree" and hosts in (4, 8)
            nic = _rate_mbit(topo["levels"][0]["rate"])
        assert specs.MIN_NIC_MBIT <= nic <= specs.MAX_NIC_MBIT
        cap = (
            specs.MAX_TOTAL_MBIT_SERIAL if spec["shaping"] == "serialize" else specs.MAX_TOTAL_MBIT
        )
        assert hosts * nic <= cap or nic == specs.MIN_NIC_MBIT


def test_seeds_draw_apart():
    assert specs.draw_spec(1, 0) != specs.draw_spec(2, 0)
    assert specs.draw_spec(1, 0) != specs.draw_spec(1, 1)


@pytest.mark.parametrize("work", list(workload.WORKLOADS.values()), ids=lambda w: w.name)
def test_workload_repetitions_pass_the_measurements_own_checks(work):
    # the quick workload once asked measure pattern for 3 repetitions, below its minimum
    # of 5: every draw of a quick study failed on its first schedule
    pattern.validate_options({"schedule": "x.goal", "max_reps": work.pattern_reps})
    collective.validate_options(
        {
            "collective": work.forced_collectives[0],
            "sizes": list(work.forced_sizes),
            "min_reps": work.forced_min_reps,
            "max_reps": work.forced_max_reps,
        }
    )
