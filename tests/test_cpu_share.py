"""Ranks sharing cores: the platform's ``cpu`` section in every model, its checks, and the
fit that writes it when the calibration's ranks ran on one machine."""

from __future__ import annotations

import subprocess
import sys

import pytest

import commodel
from commodel.errors import PlatformError
from commodel.fit.cpu import EAGER_LIMIT, cpu_section, one_machine
from commodel.platform import platform_from_dict

L, G, O_S, O_R = 5e-6, 2e-6, 3e-6, 7e-6

BASE = {
    "commodel_platform": 1,
    "name": "shared",
    "nodes": 8,
    "loggops": {"L": L, "o": 1.5e-6, "g": 1e-6, "G": 6e-12, "O": 0.0, "S": None},
    "plogp": {"L": L, "sizes": [0], "o_s": [O_S], "o_r": [O_R], "g": [G]},
    "hockney": {"alpha": L, "beta": 1e-9},
    "network": {"topology": "racks", "racks": [4, 4], "nic": 1e8, "backbone": 2e8},
    "tcp": {"efficiency": {"sizes": [1024], "exchange": [0.9], "duplex": [0.9]}},
}


def with_cpu(cores, fields=None):
    doc = {k: (dict(v) if isinstance(v, dict) else v) for k, v in BASE.items()}
    doc["cpu"] = {"cores": cores, "sizes": [0, 1024], "o_s": [O_S] * 2, "o_r": [O_R] * 2}
    doc["cpu"].update(fields or {})
    return doc


def token_ring(p: int, size: int = 512) -> str:
    """A token twice round the ring: rank i receives from i - 1, then sends to i + 1."""
    ops: dict[int, list[str]] = {r: [] for r in range(p)}
    deps: dict[int, list[str]] = {r: [] for r in range(p)}
    last: dict[int, str] = {}
    for lap in range(2):
        for hop in range(p):
            src, dst = hop, (hop + 1) % p
            s, r = f"s{lap}_{hop}", f"r{lap}_{hop}"
            ops[src].append(f"{s}: send {size}b to {dst} tag {lap}")
            ops[dst].append(f"{r}: recv {size}b from {src} tag {lap}")
            for rank, op in ((src, s), (dst, r)):
                if rank in last:
                    deps[rank].append(f"{op} requires {last[rank]}")
                last[rank] = op
    text = f"num_ranks {p}\n"
    for r in range(p):
        text += f"rank {r} {{\n" + "\n".join(ops[r] + deps[r]) + "\n}\n"
    return text


def test_a_token_hop_under_plogp_pays_the_stretched_overheads(tmp_path):
    goal = tmp_path / "ring.goal"
    goal.write_text(token_ring(8))
    alone = commodel.predict(str(goal), platform_from_dict(BASE), "plogp").makespan_s
    assert alone == pytest.approx(16 * (G + L), abs=1e-12)
    # 8 ranks on 2 cores: s = 4, each hop adds 3 (o_s + o_r)
    shared = commodel.predict(str(goal), platform_from_dict(with_cpu(2)), "plogp").makespan_s
    assert shared == pytest.approx(16 * (G + L + 3 * (O_S + O_R)), abs=1e-12)


def test_every_model_takes_the_section(tmp_path):
    """A platform with ``cpu`` and every other section drives every model; the sharing
    slows each of them down, and a core per rank changes nothing."""
    goal = tmp_path / "ring.goal"
    goal.write_text(token_ring(8))
    for name, _summary in commodel.models():
        plain = commodel.predict(str(goal), platform_from_dict(BASE), name).makespan_s
        shared = commodel.predict(str(goal), platform_from_dict(with_cpu(2)), name).makespan_s
        own = commodel.predict(str(goal), platform_from_dict(with_cpu(8)), name).makespan_s
        assert shared > plain, name
        assert own == plain, name


@pytest.mark.parametrize(
    "fields, where, words",
    [
        ({"cores": 0}, "cpu.cores", ">= 1"),
        ({"cores": 1.5}, "cpu.cores", "whole number"),
        ({"o_s": [O_S]}, "cpu.o_s", "1 value"),
        ({"sizes": [1024, 0]}, "cpu.sizes", "increas"),
        ({"o_r": [O_R, "fast"]}, "cpu.o_r", "seconds"),
    ],
)
def test_bad_cpu_fields_are_named(fields, where, words):
    with pytest.raises(PlatformError) as exc:
        platform_from_dict(with_cpu(2, fields))
    assert where in str(exc.value) and words in str(exc.value), str(exc.value)


def test_a_bad_cpu_section_exits_2_naming_file_and_field(tmp_path):
    import yaml

    plat = tmp_path / "p.yaml"
    plat.write_text(yaml.safe_dump(with_cpu(-2)))
    goal = tmp_path / "ring.goal"
    goal.write_text(token_ring(4))
    proc = subprocess.run(
        [sys.executable, "-m", "commodel", "predict", str(goal), "--platform", str(plat)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert "p.yaml" in proc.stderr and "cpu.cores" in proc.stderr
    assert "Traceback" not in proc.stderr


def rto_rows(boots, cpus):
    return [
        {"quantity": "rto_min", "value_s": 0.2, "extra": {"boot_id": b, "cpus": c}}
        for b, c in zip(boots, cpus)
    ]


def test_one_machine_is_one_boot_id_and_its_cores_the_union_of_affinities():
    assert one_machine(rto_rows(["a"] * 4, [[0, 1]] * 4)) == 2
    assert one_machine(rto_rows(["a"] * 4, [[0], [1], [2], [3]])) == 4  # bound ranks
    assert one_machine(rto_rows(["a", "b"], [[0, 1]] * 2)) is None  # two machines
    assert one_machine(rto_rows(["a"], [[0, 1]])) is None  # one rank shares nothing
    old = [{"quantity": "rto_min", "value_s": 0.2, "extra": {"source": "x"}}] * 3
    assert one_machine(old) is None  # measured before boot_id was recorded


def test_the_section_keeps_plogp_overheads_below_the_eager_limit():
    plogp = {
        "sizes": [0, 1024, EAGER_LIMIT - 512, EAGER_LIMIT, 2 * EAGER_LIMIT],
        "o_s": [1e-5, 2e-5, 3e-4, 5e-4, 9e-4],
        "o_r": [4e-5, 5e-5, 2e-4, 2.3e-2, 4e-2],
    }
    section, note = cpu_section(2, plogp)
    assert section == {
        "cores": 2,
        "sizes": [0, 1024, EAGER_LIMIT - 512],
        "o_s": [1e-5, 2e-5, 3e-4],
        "o_r": [4e-5, 5e-5, 2e-4],
    }
    assert "2 cores" in note
    assert cpu_section(2, {"sizes": [EAGER_LIMIT], "o_s": [1.0], "o_r": [1.0]}) is None
    # with an eager limit found, as Open MPI's, the overheads are plogp's as they stand
    assert cpu_section(2, {**plogp, "S": EAGER_LIMIT - 1})[0] == section


def test_sends_that_block_for_the_wire_cost_the_cpu_one_copy():
    """With no eager limit found (S null: MPICH over TCP), a blocking send returns once the
    socket has taken the message: its o_s(m) is the wire's time (MPICH's calibration of a
    58 Mbit/s cluster: 7.9 ms at 56 KiB), not CPU work. The section takes the send's CPU
    work as the receive's where that is smaller, and says so."""
    plogp = {
        "sizes": [0, 2048, 57344, EAGER_LIMIT],
        "o_s": [3.7e-6, 1.11e-4, 7.94e-3, 8.5e-3],
        "o_r": [1.03e-5, 1.2e-5, 1.09e-4, 1.1e-4],
        "S": None,
    }
    section, note = cpu_section(2, plogp)
    assert section["o_s"] == [3.7e-6, 1.2e-5, 1.09e-4]
    assert section["o_r"] == [1.03e-5, 1.2e-5, 1.09e-4]
    assert "no eager limit" in note and "min(o_s, o_r)" in note


def test_predict_says_when_the_ranks_share_cores(tmp_path):
    import yaml

    goal = tmp_path / "ring.goal"
    goal.write_text(token_ring(8))
    for cores, line in ((2, "cpu       8 ranks share 2 cores: CPU work x4\n"), (8, None)):
        plat = tmp_path / f"p{cores}.yaml"
        plat.write_text(yaml.safe_dump(with_cpu(cores)))
        proc = subprocess.run(
            [sys.executable, "-m", "commodel", "predict", str(goal), "--platform", str(plat)],
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 0, proc.stderr
        if line is None:
            assert "\ncpu " not in proc.stdout
        else:
            assert line in proc.stdout


def test_advise_says_at_which_communicator_sizes_the_ranks_share_cores():
    from commodel.advise.advice import advise
    from commodel.report.advise_tables import format_advice

    adv = advise(platform_from_dict(with_cpu(2)), "allreduce", [2, 8], [1024], model="plogp")
    assert adv.cpu_cores == 2
    text = format_advice(adv)
    assert "cpu: the ranks share 2 cores (platform `cpu` section): CPU work x 4 at P = 8\n" in (
        text
    )
    assert "\ncpu:" not in format_advice(advise(platform_from_dict(BASE), "allreduce", [8], [1024]))
