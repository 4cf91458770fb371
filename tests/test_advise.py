"""``commodel advise``: the choice per (P, size), the rules that encode it, the CLI."""

from __future__ import annotations

import subprocess
import sys

import pytest

import commodel
from commodel.advise.advice import (
    MIN_GAIN,
    Advice,
    Candidate,
    MinGain,
    Point,
    advise,
    rules_from_advice,
)
from commodel.advise.rules import format_rules, lookup, parse_rules
from commodel.openmpi import rule_message_size


def test_advice_is_the_fastest_prediction_of_each_generator():
    adv = advise("nomura2007", "bcast", [8], [1024, 65536], model="plogpt")
    assert [(p.ranks, p.size) for p in adv.points] == [(8, 1024), (8, 65536)]
    for pt in adv.points:
        times = {}
        for name, number, seg in (
            ("bcast-basic-linear", 1, None),
            ("bcast-chain", 2, None),
            ("bcast-pipeline", 3, 8192),
            ("bcast-split-binary-tree", 4, None),
            ("bcast-binary-tree", 5, None),
            ("bcast-binomial", 6, None),
            ("bcast-knomial", 7, None),
            ("bcast-scatter-allgather", 8, None),
            ("bcast-scatter-allgather-ring", 9, None),
        ):
            sched = commodel.collective(name, 8, pt.size, segment=seg)
            times[number] = commodel.predict(sched, "nomura2007", model="plogpt").makespan_s
        got = {c.number: c.time_s for c in pt.candidates if c.time_s is not None}
        assert got == times
        ranked = sorted(times, key=lambda n: (times[n], n))
        assert pt.best.number == ranked[0] and pt.runner_up.number == ranked[1]
        assert pt.margin == pytest.approx(times[ranked[1]] / times[ranked[0]] - 1)
        no_gen = {c.number for c in pt.candidates if c.note == "no generator"}
        assert no_gen == set()
    # a pipeline of 8 KiB segments beats the unsegmented binomial tree and the linear
    # fan-out on a 64 KiB buffer, not on 1 KiB
    small, large = ({c.number: c.time_s for c in pt.candidates} for pt in adv.points)
    assert large[3] < min(large[1], large[6]) and small[3] > min(small[1], small[6])


def test_a_refusing_generator_is_named_and_never_chosen():
    adv = advise("nomura2007", "allreduce", [6], [1])
    [pt] = adv.points
    raben = [c for c in pt.candidates if c.name == "rabenseifner"][0]
    assert raben.time_s is None and "at least 4 bytes" in raben.note
    assert pt.best.name in ("recursive_doubling", "ring")


def synthetic(collective: str, ranks: int, best_by_size: dict[int, int]) -> Advice:
    points = []
    for size, winner in best_by_size.items():
        cands = [
            Candidate(n, f"a{n}", f"g{n}", time_s=1.0 if n == winner else 2.0) for n in (1, 2, 3)
        ]
        points.append(Point(ranks, size, cands))
    return Advice(collective, "test", "loggops", points)


def test_rules_start_where_the_new_algorithm_wins_in_open_mpi_sizes():
    adv = synthetic("alltoall", 4, {1024: 1, 2048: 1, 4096: 2, 8192: 2, 16384: 3})
    [table] = rules_from_advice([adv])
    assert table.collective_id == 3
    [comm] = table.comm_rules
    assert comm.comm_size == 4
    # alltoall: datatype size x count x communicator size
    assert [(r.msg_size, r.algorithm) for r in comm.rules] == [(0, 1), (16384, 2), (65536, 3)]
    tables = parse_rules(format_rules([table]).encode()).tables
    for size, winner in {1024: 1, 2048: 1, 4096: 2, 8192: 2, 16384: 3}.items():
        assert lookup(tables, 3, 4, rule_message_size("alltoall", size, 4))[0] == winner


def test_bcast_rules_use_the_buffer_size_and_pipeline_segments():
    adv = synthetic("bcast", 8, {1024: 1, 65536: 3})
    [table] = rules_from_advice([adv])
    assert [(r.msg_size, r.algorithm, r.segsize) for r in table.comm_rules[0].rules] == [
        (0, 1, 0),
        (65536, 3, 8192),
    ]


def test_bcast_chain_rules_carry_open_mpis_four_chains():
    # faninout 0 in a rule would make Open MPI 4.1.4's chain a single chain
    adv = synthetic("bcast", 8, {1024: 1, 65536: 2})
    [table] = rules_from_advice([adv])
    assert [
        (r.msg_size, r.algorithm, r.faninout, r.segsize) for r in table.comm_rules[0].rules
    ] == [
        (0, 1, 0, 0),
        (65536, 2, 4, 0),
    ]


def test_every_forced_algorithm_has_a_generator():
    from commodel.openmpi import ALGORITHMS

    names = {name for name, _ in commodel.collective_names()}
    missing = []
    for collective, algorithms in ALGORITHMS.items():
        for _number, alg, gen in algorithms:
            if gen is None:
                missing.append((collective, alg))
            else:
                assert gen in names, gen
    assert missing == []


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "commodel", *args], capture_output=True, text=True, timeout=120
    )


def test_cli_table_rules_and_mpirun_line(tmp_path):
    rules = tmp_path / "r.txt"
    res = cli(
        "advise", "--platform", "nomura2007", "--collective", "gather", "--ranks", "4,8",
        "--sizes", "1KiB..4KiB", "--rules", str(rules),
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    rows = [ln.split() for ln in res.stdout.splitlines() if ln[:2].strip().isdigit()]
    assert [(r[0], r[1] + r[2]) for r in rows] == [
        (p, s) for p in ("4", "8") for s in ("1KiB", "2KiB", "4KiB")
    ]
    assert (
        "--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename "
        f"{rules}" in res.stdout
    )
    parsed = parse_rules(rules.read_bytes())
    assert parsed.problems == []
    assert [c.comm_size for c in parsed.tables[0].comm_rules] == [4, 8]
    check = cli("advise", "--check-rules", str(rules))
    assert check.returncode == 0 and "ok for Open MPI 4.1.4" in check.stdout


def test_cli_plot(tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "a.png"
    res = cli(
        "advise", "--platform", "nomura2007", "--collective", "allgather", "--ranks", "4",
        "--sizes", "1KiB,4KiB", "--plot", str(png),
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "args, message",
    [
        (["--collective", "alltoall"], "--platform required"),
        (["--platform", "nomura2007", "--collective", "reduce_x"], "unknown collective"),
        (["--check-rules", "/nonexistent/rules.txt"], "no such rules file"),
        (
            ["--platform", "nomura2007", "--collective", "bcast", "--ranks", "4,8", "--root", "5"],
            "--root 5 is not a rank of every communicator size in --ranks (4, 8)",
        ),
    ],
)
def test_cli_errors(args, message):
    res = cli("advise", *args)
    assert res.returncode == 2
    assert message in res.stderr and "Traceback" not in res.stderr


def test_check_rules_bad_file_names_line_and_field(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("1\n7 1\n8 2\n0 6 0 0\n65536 12 0 0\n")
    res = cli("advise", "--check-rules", str(path))
    assert res.returncode == 2
    assert (
        f"{path}: error: line 5: collective id 7, communicator size 8: algorithm: 12 is not "
        "an algorithm of this collective (0..9)" in res.stdout
    )
    assert "an MPI call would fail" in res.stderr


def test_the_default_is_kept_where_the_predicted_gain_is_below_the_margin():
    # nomura2007, loggops, 8 ranks: at 4 KiB Open MPI's fixed decision runs binary_tree (5),
    # predicted 239.940 us against binomial's 224.955 us (a 6.7% gain); at 32 KiB it runs
    # basic_linear (1), 2.060 ms against scatter_allgather's 729.859 us (182%)
    adv = advise("nomura2007", "bcast", [8], [4096, 32768], min_gain=0.20)
    small, large = adv.points
    assert (small.default.number, small.best.number) == (5, 6)
    assert small.gain == pytest.approx(small.default.time_s / small.best.time_s - 1)
    assert 0.05 < small.gain < 0.08
    assert small.choice(0.20) is small.default and small.keeps_default(0.20)
    assert small.choice(0.05).number == 6 and not small.keeps_default(0.05)
    assert small.choice(0.0).number == 6  # 0: today's choice, the predicted best
    assert (large.default.number, large.choice(0.20).number) == (1, 8)
    assert large.gain > 1.5
    [table] = rules_from_advice([adv])
    rules = [(r.msg_size, r.algorithm, r.faninout, r.segsize) for r in table.comm_rules[0].rules]
    assert rules == [(0, 5, 0, 0), (32768, 8, 0, 0)]
    adv0 = advise("nomura2007", "bcast", [8], [4096, 32768], min_gain=0.0)
    [table0] = rules_from_advice([adv0])
    assert [(r.msg_size, r.algorithm) for r in table0.comm_rules[0].rules] == [(0, 6), (32768, 8)]


def test_a_kept_default_runs_unsegmented_as_the_fixed_decision_does():
    # 7 ranks, 1 MiB: the fixed decision runs chain with faninout 0 (one chain) and segsize
    # 0, predicted as such, not as our 4-chain candidate; a kept chain is written 0 0
    adv = advise("nomura2007", "bcast", [7], [1048576], min_gain=100.0)
    [pt] = adv.points
    chain = [c for c in pt.candidates if c.number == 2][0]
    assert pt.default.number == 2 and pt.default is not chain
    one_chain = commodel.collective("bcast-chain", 7, 1048576, fanout=1, segment=1048576)
    assert pt.default.time_s == commodel.predict(one_chain, "nomura2007").makespan_s
    assert pt.default.time_s != chain.time_s
    assert pt.keeps_default(100.0)
    [table] = rules_from_advice([adv])
    assert [(r.algorithm, r.faninout, r.segsize) for r in table.comm_rules[0].rules] == [(2, 0, 0)]


def synthetic_with_default(gain: float, min_gain: float) -> Advice:
    best = Candidate(1, "a1", "g1", time_s=1.0)
    default = Candidate(2, "a2", "g2", time_s=1.0 + gain)
    return Advice(
        "alltoall", "test", "loggops", [Point(8, 1024, [best, default], None, default)], min_gain
    )


@pytest.mark.parametrize("gain,min_gain,chosen", [(0.15, 0.2, 2), (0.25, 0.2, 1), (0.15, 0.0, 1)])
def test_min_gain_decides_between_best_and_default(gain, min_gain, chosen):
    adv = synthetic_with_default(gain, min_gain)
    [pt] = adv.points
    assert pt.choice(adv.min_gain).number == chosen
    [table] = rules_from_advice([adv])
    assert [r.algorithm for r in table.comm_rules[0].rules] == [chosen]


def test_the_margin_depends_on_the_message_size():
    # Gain 10% at 1 KiB and at 64 KiB: the default margin (30% below 32 KiB, 5% from it)
    # keeps the default at 1 KiB and takes the best at 64 KiB; one margin for both, neither.
    # At 16 KiB the model's error on the gain (16% over the verification data sets) is that
    # of the smaller sizes (18%), not of 32 KiB and up (11%): 25% there keeps the default.
    def point(m: int) -> Point:
        best = Candidate(1, "a1", "g1", time_s=1.0)
        default = Candidate(2, "a2", "g2", time_s=1.1)
        return Point(8, m, [best, default], None, default)

    adv = Advice("alltoall", "test", "loggops", [point(1024), point(65536)], MIN_GAIN)
    assert [pt.choice(adv.min_gain).number for pt in adv.points] == [2, 1]
    assert [pt.keeps_default(adv.min_gain) for pt in adv.points] == [True, False]
    assert str(adv.min_gain) == "30% below 32 KiB, 5% from it"
    adv = Advice("alltoall", "test", "loggops", [point(16384)], MIN_GAIN)
    assert adv.points[0].keeps_default(adv.min_gain)
    adv = Advice("alltoall", "test", "loggops", [point(1024), point(65536)], 0.2)
    assert [pt.choice(adv.min_gain).number for pt in adv.points] == [2, 2]
    assert str(adv.min_gain) == "20%"
    assert MinGain.of((0.3, 0.1)).at(32767) == 0.3 and MinGain.of((0.3, 0.1)).at(32768) == 0.1


def advise_bcast_rows(min_gain: str) -> tuple[str, list[list[str]]]:
    """`advise` of bcast on nomura2007, 8 ranks, 4 and 32 KiB: its output and table rows
    (P size(2) best(2) time(2) runner-up(2) time(2) margin default(2) time(2) gain chosen)."""
    res = cli(
        "advise", "--platform", "nomura2007", "--collective", "bcast", "--ranks", "8",
        "--sizes", "4KiB,32KiB", "--min-gain", min_gain,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    return res.stdout, [ln.split() for ln in res.stdout.splitlines() if ln[:2].strip().isdigit()]


def test_cli_takes_two_margins():
    out, rows = advise_bcast_rows("0,200%")
    assert "--min-gain (0% below 32 KiB, 200% from it)" in out
    # 4 KiB: the best (6.7% over the default) whatever its gain; 32 KiB: 182.2% is not
    # above 200%
    assert [r[16] for r in rows] == ["6.7%", "182.2%"]
    assert [r[17:] for r in rows] == [rows[0][3:5], ["default"]]
    assert rows[0][3:5] == ["6", "binomial"] != rows[0][12:14]
    bad = cli("advise", "--platform", "nomura2007", "--collective", "bcast", "--min-gain", "1,2,3")
    assert bad.returncode == 2 and "--min-gain" in bad.stderr and "Traceback" not in bad.stderr


def test_cli_shows_the_default_and_rejects_a_bad_margin():
    _, rows = advise_bcast_rows("20%")
    assert [(r[12], r[13], r[16], r[17:]) for r in rows] == [
        ("5", "binary_tree", "6.7%", ["default"]),
        ("1", "basic_linear", "182.2%", ["8", "scatter_allgather"]),
    ]
    bad = cli("advise", "--platform", "nomura2007", "--collective", "bcast", "--min-gain", "-5%")
    assert bad.returncode == 2 and "--min-gain" in bad.stderr and "Traceback" not in bad.stderr


# Two racks of four nodes, 100 MB/s NICs, a 200 MB/s backbone whose ports hold 26000 bytes
# of frames (24.3 KiB of payload); PLogP's g(m) is the wire time; tail drops at full ports
# (rto 200 ms).
DROPS = {
    "commodel_platform": 1,
    "name": "narrow-backbone",
    "nodes": 8,
    "plogp": {
        "L": 50e-6,
        "sizes": [1024, 65536],
        "o_s": [1e-6, 1e-6],
        "o_r": [1e-6, 1e-6],
        "g": [1024 / 1e8, 65536 / 1e8],
    },
    "network": {
        "topology": "racks",
        "racks": [4, 4],
        "nic": 1e8,
        "backbone": 2e8,
        "buffer": [1 << 20, 26000],
    },
    "tcp": {"rto": 0.2, "fifo_limit": 65536, "rto_rule": "buffer"},
}


def test_predicted_timeouts_are_marked_and_decide_the_advice(tmp_path):
    # alltoall of 8 KiB on 8 ranks. Linear posts all seven sends of a rank at once, to
    # r - 1, r - 2, ...: in its i-th message time 1, 2, 3, 4, 3, 2, 1 of rack 0's four
    # nodes send across the backbone, which carries two: its queue reaches 4 messages
    # (32 KiB) and overflows. Pairwise sends one message per rank and step: at most four
    # across at once, 2 messages (16 KiB) queued, no drop.
    from commodel.platform import platform_from_dict

    adv = advise(platform_from_dict(DROPS), "alltoall", [8], [8192], model="tcpflow")
    [pt] = adv.points
    by = {c.name: c for c in pt.candidates if c.time_s is not None}
    assert by["linear"].timeouts > 0 and by["linear_sync"].timeouts > 0
    assert by["pairwise"].timeouts == 0
    assert by["linear"].time_s > 0.2 > by["pairwise"].time_s
    assert pt.choice(adv.min_gain).name == "pairwise"
    path = tmp_path / "drops.yaml"
    import yaml

    path.write_text(yaml.safe_dump(DROPS))
    res = cli("advise", "--platform", str(path), "--collective", "alltoall", "--ranks", "8",
              "--sizes", "8KiB", "--model", "tcpflow")  # fmt: skip
    assert res.returncode == 0, res.stderr
    row = next(ln for ln in res.stdout.splitlines() if ln.startswith("8 "))
    assert row.split()[-1] == "pairwise" and "*" in row, row
    assert "*: with the retransmission timeouts the model predicts" in res.stdout
