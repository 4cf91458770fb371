"""Open MPI 4.1.4 rules files: our tokenizer and reader against what 4.1.4 accepts and
rejects, the writer's round trip, the lookup, and rule message sizes."""

from __future__ import annotations

import pytest

from commodel.advise.rules import (
    CollectiveRules,
    CommRule,
    MessageRule,
    format_rules,
    lookup,
    parse_rules,
    tokens,
)
from commodel.openmpi import rule_message_size


def values(text: str) -> list[int]:
    return [v for v, _line in tokens(text.encode())]


@pytest.mark.parametrize(
    "text, expected",
    [
        # fscanf("%li") semantics, as glibc 2.36 (Debian 12) reads them
        ("1 2\n3", [1, 2, 3]),
        ("010 0x1F 0X10 -0x10", [8, 31, 16, -16]),
        ("08", [0, 8]),  # octal stops at 8
        ("1.5 1e5", [1, 5, 1, 5]),  # '.' and 'e' are thrown away
        ("0xg 7", [0, 7]),  # "0x" without digits reads 0
        ("+-5 --5 - 5", [5, 5, 5]),  # a sign, then one thrown-away character
        ("rule-file-version-2", [-2]),
        ("5#comment 9\n6", [5, 6]),
        ("-#c\n4", [4]),
        ("99999999999999999999 -99999999999999999999", [2**63 - 1, -(2**63)]),
        ("x-", []),
        ("abc", []),
    ],
)
def test_tokens_follow_fscanf_li(text, expected):
    assert values(text) == expected


def test_token_lines_count_every_newline():
    assert tokens(b"1\n\n  2 # x\n3\r\n4") == [(1, 1), (2, 3), (3, 4), (4, 5)]


GOOD = """\
# two collectives
2
3   # alltoall
2   # two communicator sizes
4 3
0 1 0 0
8192 2 0 0
1048576 3 0 0
16 1
0 2 0 0
7 1 8 2
0 6 0 0
65536 3 0 8192
"""


def test_good_file_is_read_exactly():
    res = parse_rules(GOOD.encode())
    assert res.accepted and res.ok and res.problems == []
    a2a, bcast = res.tables
    assert (a2a.collective_id, bcast.collective_id) == (3, 7)
    assert [c.comm_size for c in a2a.comm_rules] == [4, 16]
    assert [(r.msg_size, r.algorithm, r.line) for r in a2a.comm_rules[0].rules] == [
        (0, 1, 6),
        (8192, 2, 7),
        (1048576, 3, 8),
    ]
    assert bcast.comm_rules[0].rules[1].segsize == 8192


@pytest.mark.parametrize(
    "text, line, field, why",
    [
        ("", 1, "reader: number of collectives", "missing"),
        ("-1", 1, "reader: number of collectives", "-1 is negative"),
        ("23", 1, "reader: number of collectives", "23 is more than 22"),
        ("1\n22 0", 2, "reader: collective #1: collective id", "22 is not below 22"),
        ("1\n3 1\n4 1\n0 1 0", 4, "rule #1: segsize", "missing"),
        ("1\n3 1\n4 1\n\n1024 1 0 0", 5, "rule #1: message size", "must be at message size 0"),
        ("1\n3 1\n4 2\n0 1 0 0\n64 -2 0 0", 5, "rule #2: algorithm", "-2 is negative"),
        # the version-2 header of later Open MPI reads as -2 in 4.1.4
        ("rule-file-version-2\n1\n3 1\n4 1\n0 1 0 0", 1, "number of collectives", "negative"),
    ],
)
def test_files_open_mpi_4_1_4_ignores(text, line, field, why):
    res = parse_rules(text.encode())
    assert not res.accepted and res.tables == []
    [problem] = res.problems
    assert problem.kind == "error"
    assert problem.line == line
    assert field in problem.field
    assert why in problem.message
    assert "ignores the whole file" in problem.message


def test_accepted_but_suspicious_files():
    text = "\n".join(
        [
            "3",
            "3 2",  # alltoall
            "8 2  0 1 0 0  64 9 0 0",  # algorithm 9: alltoall has 0..5 -> MPI_ERR_ARG
            "4 2  0 2 0 0  0 3 0 0",  # comm size not ascending; message size repeated
            "3 0",  # alltoall again: replaces the first table
            "19 0",  # neighbor_alltoall: never looked up
            "5 5",  # trailing numbers
        ]
    )
    res = parse_rules(text.encode())
    assert res.accepted and not res.ok
    got = sorted((p.kind, p.line, p.field.split(":")[-1].strip()) for p in res.problems)
    assert got == [
        ("error", 3, "algorithm"),
        ("warning", 4, "communicator size"),
        ("warning", 4, "message size"),
        ("warning", 5, "collective id 3"),
        ("warning", 6, "collective id 19"),
        ("warning", 7, "trailing numbers"),
    ]


def tables_example() -> list[CollectiveRules]:
    return [
        CollectiveRules(
            3,
            [
                CommRule(4, [MessageRule(0, 1), MessageRule(4096, 2), MessageRule(1 << 20, 3)]),
                CommRule(16, [MessageRule(0, 2)]),
            ],
        ),
        CollectiveRules(7, [CommRule(8, [MessageRule(0, 6), MessageRule(65536, 3, 0, 8192)])]),
        CollectiveRules(6, [CommRule(2, [MessageRule(0, 4)])]),
    ]


def test_writer_round_trip():
    tables = tables_example()
    text = format_rules(tables)
    res = parse_rules(text.encode())
    assert res.problems == []

    def strip(ts):
        return [
            (
                t.collective_id,
                [
                    (
                        c.comm_size,
                        [(r.msg_size, r.algorithm, r.faninout, r.segsize) for r in c.rules],
                    )
                    for c in t.comm_rules
                ],
            )
            for t in ts
        ]

    assert strip(res.tables) == strip(tables)
    # four columns per message rule, no version header
    assert "rule-file-version" not in text
    rule_lines = [ln.split("#")[0].split() for ln in text.splitlines() if ln.startswith("4096")]
    assert rule_lines == [["4096", "2", "0", "0"]]


def test_lookup_as_open_mpi_4_1_4():
    tables = tables_example()
    assert lookup(tables, 3, 4, 0) == (1, 0, 0)
    assert lookup(tables, 3, 4, 4095) == (1, 0, 0)
    assert lookup(tables, 3, 4, 4096) == (2, 0, 0)
    assert lookup(tables, 3, 8, 1 << 30) == (3, 0, 0)  # 8 ranks: the rules of 4
    assert lookup(tables, 3, 2, 0) == (1, 0, 0)  # below the first size: the first is used
    assert lookup(tables, 3, 64, 10) == (2, 0, 0)
    assert lookup(tables, 7, 8, 70000) == (3, 0, 8192)
    assert lookup(tables, 9, 8, 0) is None  # no gather rules
    zero = [CollectiveRules(3, [CommRule(4, [MessageRule(0, 0)])])]
    assert lookup(zero, 3, 4, 100) is None  # algorithm 0: no rule


@pytest.mark.parametrize(
    "collective, size, ranks, expected",
    [
        ("alltoall", 1024, 8, 8192),
        ("allgather", 1024, 8, 8192),
        ("gather", 100, 3, 300),
        ("scatter", 100, 3, 300),
        ("allreduce", 1024, 8, 1024),
        ("bcast", 1024, 8, 1024),
        ("barrier", 1024, 8, 0),
    ],
)
def test_rule_message_size(collective, size, ranks, expected):
    assert rule_message_size(collective, size, ranks) == expected
