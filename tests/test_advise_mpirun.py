"""A rules file written by ``commodel advise`` drives a real Open MPI 4.1.4 mpirun.

Release builds of Open MPI print nothing about the rules they read (the coll/tuned verbose
output is compiled out), so the tests use signatures that are deterministic and need no
PMPI: an algorithm number the collective does not have makes the call fail with
MPI_ERR_ARG (``ompi_coll_tuned_<coll>_intra_do_this``), and the two_proc algorithm of
alltoall on 4 ranks fails with MPI_ERR_UNSUPPORTED_OPERATION, while every other algorithm
succeeds. Which one happens shows which rule Open MPI looked up; a file Open MPI ignores
gives its fixed decision, which succeeds.
"""

from __future__ import annotations

import subprocess

import pytest

from commodel.advise.rules import (
    CollectiveRules,
    CommRule,
    MessageRule,
    parse_rules,
    write_rules,
)
from commodel.openmpi import rule_message_size
from mpirun import command, commodel, env, needs_mpi

pytestmark = [pytest.mark.mpi, needs_mpi]

# Each rank calls the collective once per size (MPI_BYTE) and rank 0 prints one line per
# size: "ok" or the MPI error class name.
PROBE = """
import sys
from mpi4py import MPI
coll = sys.argv[1]
comm = MPI.COMM_WORLD
names = {MPI.ERR_ARG: "ERR_ARG", MPI.ERR_UNSUPPORTED_OPERATION: "ERR_UNSUPPORTED_OPERATION"}
for m in [int(x) for x in sys.argv[2].split(",")]:
    n = comm.Get_size()
    s, r = bytearray(max(m * n, 1)), bytearray(max(m * n, 1))
    try:
        if coll == "alltoall":
            comm.Alltoall([s, m, MPI.BYTE], [r, m, MPI.BYTE])
        elif coll == "bcast":
            comm.Bcast([s, m, MPI.BYTE], root=0)
        else:
            raise SystemExit("unknown " + coll)
        out = "ok"
    except MPI.Exception as exc:
        out = names.get(exc.Get_error_class(), str(exc.Get_error_class()))
    everyone = comm.gather(out, root=0)
    if comm.Get_rank() == 0:
        print(m, everyone[0] if len(set(everyone)) == 1 else "mixed " + repr(everyone))
"""


def probe(tmp_path, n: int, coll: str, sizes: list[int], rules: str | None) -> dict[int, str]:
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    e = env()
    if rules is not None:
        e["OMPI_MCA_coll_tuned_use_dynamic_rules"] = "1"
        e["OMPI_MCA_coll_tuned_dynamic_rules_filename"] = rules
    res = subprocess.run(
        command(n, str(script), coll, ",".join(map(str, sizes)), module=False),
        env=e,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert res.returncode == 0, res.stderr
    return {int(a): b for a, b in (line.split(" ", 1) for line in res.stdout.splitlines())}


def one_rule_table(cid: int, comm_size: int, rules: list[tuple[int, int]]):
    return [CollectiveRules(cid, [CommRule(comm_size, [MessageRule(m, a) for m, a in rules])])]


def test_advise_rules_file_is_what_mpirun_runs(tmp_path):
    """advise writes alltoall rules for 4 ranks; Open MPI runs the algorithm they name, and
    with the named algorithm changed to two_proc or to a number alltoall lacks, the very
    same lookup fails the way that algorithm must."""
    rules = tmp_path / "advised.txt"
    res = commodel(
        "advise", "--platform", "nomura2007", "--collective", "alltoall", "--ranks", "4",
        "--sizes", "1KiB..16KiB", "--rules", str(rules),
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert f"--mca coll_tuned_dynamic_rules_filename {rules}" in res.stdout
    parsed = parse_rules(rules.read_bytes())
    assert parsed.ok and parsed.problems == []
    [table] = parsed.tables
    assert table.collective_id == 3 and [c.comm_size for c in table.comm_rules] == [4]
    named = {r.algorithm for r in table.comm_rules[0].rules}
    assert named <= {1, 2, 3, 4}
    sizes = [1024, 4096, 16384]
    assert probe(tmp_path, 4, "alltoall", sizes, str(rules)) == dict.fromkeys(sizes, "ok")
    text = rules.read_text()
    for number, outcome in ((5, "ERR_UNSUPPORTED_OPERATION"), (9, "ERR_ARG")):
        changed = tmp_path / f"changed{number}.txt"
        lines = []
        for line in text.splitlines():
            fields = line.split("#")[0].split()
            if len(fields) == 4:  # a message rule: msg_size algorithm faninout segsize
                fields[1] = str(number)
                line = " ".join(fields)
            lines.append(line)
        changed.write_text("\n".join(lines) + "\n")
        got = probe(tmp_path, 4, "alltoall", sizes, str(changed))
        assert got == dict.fromkeys(sizes, outcome)


def test_message_size_of_alltoall_is_count_times_comm_size(tmp_path):
    """Rules: pairwise (2) from 0, two_proc (5) from 4 x 1000 bytes. On 4 ranks, 999 bytes
    to each rank stay below and succeed, 1000 reach it and fail: Open MPI 4.1.4 looks up
    datatype size x count x communicator size."""
    threshold = rule_message_size("alltoall", 1000, 4)
    assert threshold == 4000
    path = tmp_path / "a2a.txt"
    write_rules(one_rule_table(3, 4, [(0, 2), (threshold, 5)]), path)
    got = probe(tmp_path, 4, "alltoall", [999, 1000, 1001], str(path))
    assert got == {999: "ok", 1000: "ERR_UNSUPPORTED_OPERATION", 1001: "ERR_UNSUPPORTED_OPERATION"}


def test_message_size_of_bcast_is_count_and_comm_sizes_pick_rules(tmp_path):
    """bcast: the rule size is datatype size x count (no communicator size); the rules of
    communicator size 2 apply to 2 ranks, those of 4 are not reached."""
    path = tmp_path / "bcast.txt"
    tables = [
        CollectiveRules(
            7,
            [
                CommRule(2, [MessageRule(0, 6), MessageRule(1000, 99)]),
                CommRule(4, [MessageRule(0, 99)]),
            ],
        )
    ]
    write_rules(tables, path)
    assert parse_rules(path.read_bytes()).ok is False  # algorithm 99: our checker says so
    got = probe(tmp_path, 2, "bcast", [999, 1000], str(path))
    assert got == {999: "ok", 1000: "ERR_ARG"}


def test_a_malformed_file_is_ignored_silently(tmp_path):
    """A first message rule not at 0 makes 4.1.4 drop the whole file without a word; the
    fixed decision then runs (two_proc never reached), and our checker says why (exit 2)."""
    path = tmp_path / "bad.txt"
    path.write_text("1\n3 1\n4 1\n64 5 0 0\n")
    assert probe(tmp_path, 4, "alltoall", [1024], str(path)) == {1024: "ok"}
    res = commodel("advise", "--check-rules", str(path))
    assert res.returncode == 2
    assert "line 4" in res.stdout and "message size 0, got 64" in res.stdout
    assert "ignores this rules file" in res.stderr
    # the same file with the rule at 0 is read and used: two_proc on 4 ranks fails
    path.write_text("1\n3 1\n4 1\n0 5 0 0\n")
    assert probe(tmp_path, 4, "alltoall", [1024], str(path)) == {1024: "ERR_UNSUPPORTED_OPERATION"}
    assert commodel("advise", "--check-rules", str(path)).returncode == 0
