"""Numbers and counts from a user's files and options: checked before anything is sized by
them, with an error that names the file and field (issue 40's crash classes)."""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path
from typing import Any

import pytest

from commodel import parse_goal, predict
from commodel.cluster.spec import load_spec
from commodel.cluster.util import ClusterError
from commodel.errors import CommodelError
from commodel.platform import load_platform, platform_from_dict
from commodel.platform.fields import MAX_NODES, MAX_RANKS
from conftest import needs_engine
from test_platform_input import error_of, write

BIG = 10**400  # an integer too large for a float

BASE: dict[str, Any] = {
    "commodel_platform": 1,
    "name": "b",
    "nodes": 4,
    "plogp": {
        "L": 1e-6,
        "sizes": [0, 1024],
        "o_s": [1e-6, 2e-6],
        "o_r": [1e-6, 2e-6],
        "g": [1e-6, 3e-6],
    },
    "network": {"topology": "crossbar", "nodes": 4, "nic": 1e8},
}


def platform_error(path: Path) -> str:
    return error_of(path)


def with_network(**network: Any) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    data["network"] = network
    return data


# --- integers too large for a float ----------------------------------------------------


@pytest.mark.parametrize(
    ("section", "key", "shown"),
    [
        ("network", "nic", "network.nic: must be a rate in bytes per second: a 1329-bit integer"),
        ("plogp", "L", "plogp.L: must be a time in seconds: a 1329-bit integer"),
    ],
)
def test_integer_too_large_for_a_float_names_the_field(
    tmp_path: Path, section: str, key: str, shown: str
) -> None:
    data = copy.deepcopy(BASE)
    data[section][key] = BIG
    path = write(tmp_path, data)
    assert platform_error(path).startswith(f"{path}: {shown} is too large")


def test_oversubscription_too_large_for_a_float(tmp_path: Path) -> None:
    data = with_network(
        topology="leaf-spine", leaves=2, nodes_per_leaf=2, nic=1e8, oversubscription=BIG
    )
    path = write(tmp_path, data)
    assert platform_error(path).startswith(f"{path}: network.oversubscription: must be a number")


def test_tcp_eps_s_too_large_for_a_float(tmp_path: Path) -> None:
    path = write(tmp_path, {**BASE, "tcp": {"eps_S": BIG}})
    assert platform_error(path).startswith(f"{path}: tcp.eps_S: must be a number: a 1329-bit")


def test_cluster_rate_too_large_for_a_float(tmp_path: Path) -> None:
    path = write(
        tmp_path, f"hosts: 2\nnic_rate: {BIG}\ntopology: {{type: racks, backbone_rate: 100Mbit}}\n"
    )
    with pytest.raises(ClusterError) as info:
        load_spec(path)
    assert str(info.value).startswith(f"{path}: nic_rate: a 1329-bit integer is too large")


def test_cluster_spec_bytes_not_utf8_name_the_offset(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(b"hosts: 2\xff\nnic_rate: 100Mbit\n")
    with pytest.raises(ClusterError) as info:
        load_spec(path)
    assert str(info.value) == f"{path}:1: byte 8 (0xff) is not UTF-8; a cluster spec is UTF-8 text"


def test_cluster_spec_timestamp_tag_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "description: !!timestamp x\nhosts: 2\n")
    with pytest.raises(ClusterError, match=r"c?\.yaml:1:14: invalid YAML: tag '!!timestamp'"):
        load_spec(path)


# --- counts bounded before anything is sized by them -------------------------------------


@pytest.mark.parametrize(
    ("network", "message"),
    [
        (
            {"topology": "leaf-spine", "leaves": 2**64, "nodes_per_leaf": 1, "nic": 1e8},
            f"network.leaves: must be at most {MAX_NODES} (the engine builds every node's links)",
        ),
        (
            {"topology": "racks", "racks": 2**64, "nodes_per_rack": 1, "nic": 1e8, "backbone": 1e9},
            f"network.racks: must be at most {MAX_NODES}",
        ),
        (
            {"topology": "leaf-spine", "leaves": 2**11, "nodes_per_leaf": 2**11, "nic": 1e8},
            f"network.leaves: 2048 leaves of 2048 nodes make {2**22} nodes; at most {MAX_NODES}",
        ),
        (
            {"topology": "racks", "racks": [2**20, 2**20], "nic": 1e8, "backbone": 1e9},
            f"network.racks: racks of {2**21} nodes in all make {2**21} nodes",
        ),
        (
            {"topology": "crossbar", "nodes": 2**21, "nic": 1e8},
            f"network.nodes: must be at most {MAX_NODES}",
        ),
    ],
)
def test_node_counts_are_bounded(tmp_path: Path, network: dict, message: str) -> None:
    path = write(tmp_path, with_network(**network))
    assert platform_error(path).startswith(f"{path}: {message}")


def test_nodes_are_bounded(tmp_path: Path) -> None:
    path = write(tmp_path, {**BASE, "nodes": 2**64, "network": None})
    assert platform_error(path).startswith(f"{path}: nodes: must be at most {MAX_NODES}")


def test_ranks_per_node_is_bounded_by_the_engines_rank_numbers(tmp_path: Path) -> None:
    path = write(tmp_path, {**BASE, "ranks_per_node": 2**62})
    assert platform_error(path).startswith(
        f"{path}: ranks_per_node: must be at most {MAX_RANKS // 4} (4 nodes hold at most "
        f"{MAX_RANKS} ranks"
    )


@needs_engine
def test_a_huge_ranks_per_node_places_only_the_schedules_ranks() -> None:
    """The placement covers the schedule's ranks, not every rank the platform holds: 4 nodes
    of 2**29 ranks each predict a 2-rank schedule at once (it took over 20 s, building a
    list of 2**32 nodes)."""
    platform = platform_from_dict({**BASE, "ranks_per_node": 2**29})
    schedule = parse_goal(
        "num_ranks 2\nrank 0 {\na: send 1000b to 1\n}\nrank 1 {\nb: recv 1000b from 0\n}\n"
    )
    start = time.process_time()
    for model in ("plogpt", "maxmin", "zhu", "tcpflow"):
        result = predict(schedule, platform, model=model)
        # both ranks on node 0: the message never crosses the crossbar
        assert result.makespan_s > 0
    assert platform.engine_params("plogpt", 2)["rank_to_node"] == [0, 0]
    assert time.process_time() - start < 5  # a bound on work, not a timing assertion


# --- many_to_one, validated at load ------------------------------------------------------

M2O = {
    "n": [3, 4],
    "sizes": [1024, 4096],
    "M1": [1024, None],
    "Mc": [None, None],
    "M2": None,
    "levels": [0.2],
    "probability": [
        {
            "kx": 1,
            "ky": 1,
            "n_knots": [3.0, 3.0, 4.0, 4.0],
            "M_knots": [1024.0, 1024.0, 4096.0, 4096.0],
            "coefficients": [0.1, 0.2, 0.3, 0.4],
        }
    ],
    "kappa_1": 0.5,
    "kappa_2": None,
}


def with_m2o(**changes: Any) -> dict[str, Any]:
    m2o = copy.deepcopy(M2O)
    for key, value in changes.items():
        if "." in key:
            outer, index, inner = key.split(".")
            if value is ...:
                del m2o[outer][int(index)][inner]
            else:
                m2o[outer][int(index)][inner] = value
        elif value is ...:
            del m2o[key]
        else:
            m2o[key] = value
    return {**BASE, "many_to_one": m2o}


def test_a_valid_many_to_one_section_loads_as_a_dict(tmp_path: Path) -> None:
    m2o = load_platform(write(tmp_path, with_m2o())).sections["many_to_one"]
    assert m2o["M1"] == [1024, None] and m2o["probability"][0]["kx"] == 1


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"probability.0.n_knots": ["a", 3.0, 4.0, 4.0]},
            "many_to_one.probability[0].n_knots[0]: must be a number, got 'a'",
        ),
        ({"probability.0.kx": 10**30}, "many_to_one.probability[0].kx: must be at most 5"),
        ({"probability.0.n_knots": ...}, "many_to_one.probability[0].n_knots: missing"),
        (
            {"probability.0.coefficients": [0.1, 0.2]},
            "many_to_one.probability[0].coefficients: has 2 values; knots of 4 and 4 values",
        ),
        (
            {"probability.0.M_knots": [1024.0, 1024.0, float("nan"), 4096.0]},
            "many_to_one.probability[0].M_knots[2]: must be a finite number",
        ),
        ({"M1": [1024, "x"]}, "many_to_one.M1[1]: must be a size in bytes"),
        ({"M1": [1024, [1]]}, "many_to_one.M1[1]: must be a size in bytes"),
        ({"n": 3}, "many_to_one.n: must be a list"),
        ({"Mc": "x"}, "many_to_one.Mc: must be a list"),
        ({"M2": [1, 2]}, "many_to_one.M2: must be a size in bytes"),
        ({"levels": [[0.1]]}, "many_to_one.levels[0]: must be a time in seconds"),
        ({"levels": [0.1, 0.2]}, "many_to_one.probability: has 1 surfaces but levels has 2"),
        ({"n": ..., "M1": [1, 2]}, "many_to_one.n: missing: M1 gives one value per process count"),
        ({"M1": [1024]}, "many_to_one.M1: has 1 values but many_to_one.n has 2"),
        ({"n": [4, 3]}, "many_to_one.n[1]: must be strictly increasing"),
        ({"receives": "x"}, "many_to_one.receives: unknown receives 'x'"),
    ],
)
def test_bad_many_to_one_names_the_field(tmp_path: Path, changes: dict, message: str) -> None:
    path = write(tmp_path, with_m2o(**changes))
    assert platform_error(path).startswith(f"{path}: {message}")


# --- what advise and predict --samples would build, bounded first -----------------------


def test_advise_refuses_a_size_whose_schedule_would_not_fit(cli) -> None:
    result = cli(
        *[
            "advise",
            "-p",
            "nomura2007",
            "--collective",
            "bcast",
            "--ranks",
            "8",
            "--sizes",
            "4294967296",
        ]
    )
    assert result.code == 2
    assert (
        "advise: the bcast schedule at P=8, 4 GiB would hold about 5.5e+11 operations" in result.err
    )
    assert f"more than the {2**28} one schedule may" in result.err


def test_advise_refuses_no_size(cli) -> None:
    result = cli("advise", "-p", "nomura2007", "--collective", "bcast", "--sizes", ",")
    assert result.code == 2 and "--sizes: expected at least one size, got ','" in result.err


def test_advise_refuses_a_huge_split(cli) -> None:
    result = cli(
        "advise",
        "-p",
        "nomura2007",
        "--collective",
        "gather",
        "--ranks",
        "8",
        "--sizes",
        "1KiB",
        "--splits",
        "65536",
    )
    assert result.code == 2
    assert "a gather split into 65536 sub-gathers at P=8, 1 KiB: at most 4096" in result.err


def test_advise_refuses_a_huge_communicator(cli) -> None:
    result = cli(
        "advise",
        "-p",
        "nomura2007",
        "--collective",
        "alltoall",
        "--ranks",
        "100000",
        "--sizes",
        "1KiB",
    )
    assert result.code == 2 and "the alltoall schedule at P=100000, 1 KiB" in result.err


def test_schedule_units_closed_form() -> None:
    from commodel.schedule_cost import schedule_units

    # bcast pipeline (number 3, 8 KiB segments) at P = 8, 1 MiB: 128 segments
    assert schedule_units("bcast", 3, 8, 1 << 20) == 4 * 64 + 16 * 8 + 4 * 8 * 128 + 2 * 128**2
    # as Open MPI's default runs it: unsegmented
    assert schedule_units("bcast", 3, 8, 1 << 20, as_default=True) == 4 * 64 + 16 * 8
    assert schedule_units("gather", 0, 8, 1024, splits=4) == 4 * 64 + 16 * 8 + 4 * 4 * 8


def test_predict_samples_refuses_too_many_runs() -> None:
    from commodel.lmo.incast import predict_samples

    platform = platform_from_dict(with_m2o())
    schedule = parse_goal(
        "num_ranks 2\nrank 0 {\na: send 1000b to 1\n}\nrank 1 {\nb: recv 1000b from 0\n}\n"
    )
    with pytest.raises(CommodelError, match=r"--samples 1000000: at most 100000 runs"):
        predict_samples(schedule, platform, "plogp", 1_000_000)


def test_a_size_too_large_for_a_float_is_named(tmp_path: Path) -> None:
    """Found by fuzz/harness.py (platform-yaml): the message itself formatted the integer as
    a float and raised OverflowError."""
    data = copy.deepcopy(BASE)
    data["plogp"]["S"] = BIG
    path = write(tmp_path, data)
    assert platform_error(path) == (
        f"{path}: plogp.S: must be a size in bytes: size of a 1329-bit number of bytes is too "
        "large (at most 2**64 - 1 bytes)"
    )


def test_schedule_refuses_a_segmented_bcast_too_large(cli, tmp_path: Path) -> None:
    """The segmented bcasts make each segment wait on the earlier ones (2 s^2 dependencies
    at most): 4 GiB in 8 KiB segments would never finish writing."""
    result = cli("schedule", "bcast-pipeline", "-P", "8", "-m", "4GiB", "-o", str(tmp_path / "x"))
    assert result.code == 2 and not (tmp_path / "x").exists()
    assert (
        "collective: bcast-pipeline of 4294967296 bytes in segments of 8192 would hold 524288 "
        "segments and about 5.5e+11 dependencies, more than 268435456"
    ) in result.err
    result = cli("schedule", "bcast-binomial", "-P", "4", "-m", "64MiB", "--segment", "1KiB")
    assert result.code == 2 and "65536 segments" in result.err
    # unsegmented by default: any size
    assert (
        cli("schedule", "bcast-binomial", "-P", "4", "-m", "1GiB", "-o", str(tmp_path / "y")).code
        == 0
    )


def test_a_rules_file_too_large_is_refused(cli, tmp_path: Path) -> None:
    path = tmp_path / "rules.txt"
    path.write_bytes(b"1 0 1 8 1 0 0 0 " + b"# padding\n" * 500_000)
    result = cli("advise", "--check-rules", str(path))
    assert result.code == 2
    assert f"{path}: larger than 4 MiB; a rules file is at most 4194304 bytes" in result.err


@pytest.mark.parametrize("levels, said", [(40, "nested 42 levels"),
                                          (5000, "nested deeper than Python's JSON reader goes")])  # fmt: skip
def test_an_mpich_tuning_file_nested_too_deep_is_refused(
    cli, tmp_path: Path, levels: int, said: str
) -> None:
    """Found while writing the rules target's MPICH grammar: 5000 levels ended in a
    RecursionError (an internal error), 960 in messages of half a megabyte. json-c, with which MPICH's
    csel.c parses the file, stops at 32 levels and MPICH then has no selection."""
    path = tmp_path / "tuning.json"
    path.write_text(
        '{"collective=bcast": ' + '{"comm_size<=4": ' * levels + "{}" + "}" * (levels + 1)
    )
    result = cli("advise", "--check-rules", str(path), "--mpi", "mpich")
    assert result.code == 2
    assert result.out == (
        f"{path}: error: {said}: json-c, which MPICH reads the file with, parses at most 32 "
        "levels (its default), so MPICH has no selection at all\n"
    )
    assert f"{path}: MPICH 5.0 fails on this tuning file" in result.err


@pytest.mark.parametrize("leaf, said", [([], "an array"), ("ring", "a string"), (0, "a number"),
                                        (None, "null"), (True, "a boolean")])  # fmt: skip
def test_an_mpich_algorithm_leaf_not_an_object_is_refused(
    cli, tmp_path: Path, leaf: Any, said: str
) -> None:
    """`"algorithm=...": []` where MPICH expects {}: --check-rules said ok, but csel.c asserts
    that every value it reads is an object and MPICH 5.0.2 aborts at MPI_Init (line 329 of
    csel.c; test_mpis.py runs it). The error names the file and the value's JSON path."""
    path = tmp_path / "tuning.json"
    tree = {"collective=bcast": {"comm_type=intra": {"comm_size<=4": {
        "algorithm=MPIR_Bcast_intra_binomial": leaf}, "comm_size=any": {
        "algorithm=MPIR_Bcast_intra_binomial": {}}}}}  # fmt: skip
    path.write_text(json.dumps(tree))
    result = cli("advise", "--check-rules", str(path), "--mpi", "mpich")
    assert result.code == 2
    assert result.out.splitlines()[0] == (
        f"{path}: error: collective=bcast > comm_type=intra > comm_size<=4 > "
        f"algorithm=MPIR_Bcast_intra_binomial: {said} where csel.c asserts an object ({{}}), "
        "so MPICH aborts at MPI_Init"
    )
    assert f"{path}: MPICH 5.0 fails on this tuning file" in result.err


def test_an_mpich_tuning_file_is_read_at_most_4_mib(cli, tmp_path: Path) -> None:
    path = tmp_path / "tuning.json"
    path.write_bytes(b'{"collective=bcast": {}' + b" " * (4 * 2**20) + b"}")
    result = cli("advise", "--check-rules", str(path), "--mpi", "mpich")
    assert result.code == 2
    assert f"{path}: larger than 4 MiB; a rules file is at most 4194304 bytes" in result.err


def test_use_rules_keeps_the_bytes_of_a_file_not_utf8(tmp_path: Path) -> None:
    """A comment not UTF-8: Open MPI reads past it and --check-rules said ok, but
    --use-rules then ended in a UnicodeDecodeError (found while writing the rules target,
    which now reads every file as --use-rules does). The file is kept byte for byte, and a
    resumed verification compares bytes."""
    from commodel.advise.verify_runs import check_rules_unchanged
    from commodel.cli.advise import read_given_rules
    from commodel.db import ResultsDB

    data = b"1 # one collective, \xff\n7 1 4 1 0 1 0 0\n"
    given = tmp_path / "given.rules"
    given.write_bytes(data)
    tables, kept = read_given_rules(str(given), "bcast")
    assert kept == data
    assert [(t.collective_id, t.comm_rules[0].rules[0].algorithm) for t in tables] == [(7, 1)]
    copy, db = tmp_path / "v.rules.txt", tmp_path / "v.duckdb"
    copy.write_bytes(data)
    with ResultsDB(db) as results:
        results.create_campaign(
            "collective", "v", {"rules_file": str(copy)}, [], "Open MPI", "4.1.4"
        )
    check_rules_unchanged(str(db), str(copy), data)  # the same bytes: resumed
    with pytest.raises(CommodelError, match="whose advice has changed since"):
        check_rules_unchanged(str(db), str(copy), data.replace(b"\xff", b"\xfe"))


def test_an_mpich_tuning_file_is_checked_as_csel_reads_its_keys(cli, tmp_path: Path) -> None:
    """csel.c drops the spaces of a key and reads a condition's number with atoi:
    `comm_size <= 4` was an error of --check-rules (unknown key) that MPICH 5.0.2 runs, and
    `collective=foo` passed where MPICH asserts at MPI_Init (test_mpis.py runs both)."""
    path = tmp_path / "tuning.json"
    leaf = {"algorithm=MPIR_Bcast_intra_binomial": {}}
    path.write_text(json.dumps({"collective=bcast": {"comm_type=intra": {
        "comm_size <= 4": leaf, "comm_size<=8x": leaf, "any": leaf}}}))  # fmt: skip
    result = cli("advise", "--check-rules", str(path), "--mpi", "mpich")
    assert result.code == 0, result.err
    assert result.out.splitlines()[:2] == [
        f"{path}: warning: collective=bcast > comm_type=intra > comm_size <= 4: MPICH reads the "
        "key as 'comm_size<=4' (csel.c drops the spaces of a key)",
        f"{path}: warning: collective=bcast > comm_type=intra > comm_size<=8x: MPICH reads the "
        "key as 'comm_size<=8' (atoi stops at 'x')",
    ]  # fmt: skip
    path.write_text(json.dumps({"collective=foo": {"comm_type=intra": {"any": leaf}}}))
    result = cli("advise", "--check-rules", str(path), "--mpi", "mpich")
    assert result.code == 2
    assert result.out.splitlines()[0] == (
        f"{path}: error: top > collective=foo: MPICH has no collective 'foo' (csel.c asserts "
        "at MPI_Init)"
    )
    assert f"{path}: MPICH 5.0 fails on this tuning file" in result.err


@pytest.mark.parametrize("value", ["\u00b2", "1:0-\u00b2", "\u0663:0-100"])
def test_intel_mpi_settings_with_digits_not_ascii_are_refused(
    cli, tmp_path: Path, value: str
) -> None:
    """The intel-settings fuzz target's finding: a '²' where a number belongs passed
    str.isdigit and ended in int()'s ValueError (an internal error); '٣' was read as 3.
    Intel MPI 2021.18.1 says "Incorrect adjust value" to each (test_intel_mpi.py runs it)."""
    path = tmp_path / "settings.env"
    path.write_text(f"export I_MPI_ADJUST_ALLREDUCE='{value}'\n")
    result = cli("advise", "--check-rules", str(path), "--mpi", "intel-mpi")
    assert result.code == 2
    assert result.out.splitlines()[0].startswith(f"{path}: error: I_MPI_ADJUST_ALLREDUCE: ")
    assert result.out.splitlines()[-1] == (
        f"{path}: error: I_MPI_ADJUST_ALLREDUCE: Intel MPI ignores I_MPI_ADJUST_ALLREDUCE whole "
        "('Incorrect adjust value' at MPI_Init)"
    )
    assert f"{path}: Intel MPI ignores these settings" in result.err


@pytest.mark.parametrize("mpi", ["openmpi-4.1", "openmpi-5.0"])
def test_an_open_mpi_rules_number_of_5000_digits_is_read_as_fscanf_reads_it(
    cli, tmp_path: Path, mpi: str
) -> None:
    """Found by the rules target once its MPICH grammar wrote 5000-digit numbers (every reader
    gets the same bytes): Open MPI's reader ended in int()'s digit limit (a ValueError).
    fscanf's %ld reads it as LONG_MAX, and the error names the line and the field."""
    path = tmp_path / "rules.txt"
    path.write_text("1\n0\n1\n8\n1\n0 " + "9" * 5000 + " 0 0\n")
    result = cli("advise", "--check-rules", str(path), "--mpi", mpi)
    assert result.code == 2
    assert result.out.startswith(
        f"{path}: error: line 6: collective id 0, communicator size 8: algorithm: "
        "9223372036854775807 is not an algorithm of this collective"
    )
