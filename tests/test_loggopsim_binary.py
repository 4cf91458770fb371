"""LogGOPSim's binary schedules (txt2bin output) through `commodel predict` and read_goal.

A small file is written here byte by byte from the layout in docs/formats.md. The
comparison with txt2bin itself needs LogGOPSim's source: set COMMODEL_LOGGOPSIM_SRC to a
checkout of spcl/LogGOPSim (it is never part of this repository); txt2bin is generated
by re2c and gengetopt, so those must be installed too.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

import commodel
from commodel import errors
from conftest import EXAMPLES, needs_engine

pytestmark = needs_engine

ANY = 2**32 - 1


def record(
    deps: int,
    kind: int,
    peer: int,
    size: int,
    tag: int,
    req: tuple[int, int] = (0, 0),
    ireq: tuple[int, int] = (0, 0),
    cpu: int = 0,
    nic: int = 0,
) -> bytes:
    """One 39-byte operation record; ``req``/``ireq``: (count, first index) of dependents."""
    return struct.pack("<IBIQIBBIIII", deps, kind, peer, size, tag, cpu, nic, *req, *ireq)


def binary(sections: list[bytes], max_cpu: int = 0, max_nic: int = 0) -> bytes:
    """A whole file: cookie, header, table of sections, sections."""
    head = struct.pack("<QIBB", 4223, len(sections), max_cpu, max_nic)
    at = 4 + 2 + 16 * len(sections)
    table = b""
    for s in sections:
        table += struct.pack("<QQ", at, at + len(s))
        at += len(s)
    return head + table + b"".join(sections)


def pingpong() -> bytes:
    """Rank 0 sends 1 KiB to rank 1 and then receives 1 KiB back (requires the send);
    rank 1 receives from any source, then replies (requires the receive)."""
    rank0 = (
        struct.pack("<II", 2, 1)
        + struct.pack("<I", 0)
        + record(0, 1, 1, 1024, 7, req=(1, 0))
        + record(1, 2, 1, 1024, 8, req=(0, 1))
        + struct.pack("<I", 1)
    )
    rank1 = (
        struct.pack("<II", 2, 1)
        + struct.pack("<I", 0)
        + record(0, 2, ANY, 1024, ANY, req=(1, 0))
        + record(1, 1, 0, 1024, 8, req=(0, 1))
        + struct.pack("<I", 1)
    )
    return binary([rank0, rank1])


PINGPONG_GOAL = """num_ranks 2
rank 0 {
s: send 1024b to 1 tag 7
r: recv 1024b from 1 tag 8
r requires s
}
rank 1 {
r: recv 1024b from -1 tag -1
s: send 1024b to 0 tag 8
s requires r
}
"""


def same_prediction(cli, a: Path, b: Path) -> dict:
    """`commodel predict --json` of two files: the same output but for the file name."""
    outs = []
    for path in (a, b):
        result = cli("predict", path, "--platform", "loggopsim-default", "--json")
        assert result.code == 0, result.err
        outs.append(result.out.replace(str(path), "FILE"))
    assert outs[0] == outs[1]
    return json.loads(outs[0])


def test_a_hand_made_binary_predicts_as_its_text(cli, tmp_path: Path) -> None:
    bin_path = tmp_path / "pingpong.bin"
    bin_path.write_bytes(pingpong())
    text_path = tmp_path / "pingpong.goal"
    text_path.write_text(PINGPONG_GOAL)
    schedule = commodel.read_goal(bin_path)
    assert schedule.num_ranks == 2 and schedule.num_ops == 4
    prediction = same_prediction(cli, bin_path, text_path)
    # Eager 1 KiB each way: o + L + (m - 1) G + o = 1500 + 5000 + 8184 + 1500 ns, twice.
    assert prediction["makespan_ps"] == 2 * 16184 * 1000


def test_a_truncated_binary_names_the_byte(cli, tmp_path: Path) -> None:
    path = tmp_path / "cut.bin"
    path.write_bytes(pingpong()[:60])
    result = cli("predict", path, "--platform", "loggopsim-default")
    assert result.code == 2
    assert result.err == (
        f"commodel: error: {path}: byte 14: rank 0's section runs from 38 to 132, "
        "outside the 52 bytes after the cookie\n"
    )
    with pytest.raises(errors.GoalError, match="byte 14"):
        commodel.read_goal(path)


# --- against txt2bin itself ---------------------------------------------------------------


@pytest.fixture(scope="module")
def txt2bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """txt2bin built from LogGOPSim's source with g++ (skipped when it cannot be)."""
    src = os.environ.get("COMMODEL_LOGGOPSIM_SRC")
    if not src:
        pytest.skip("COMMODEL_LOGGOPSIM_SRC is not set (a checkout of spcl/LogGOPSim)")
    tools = [t for t in ("re2c", "gengetopt", "g++") if shutil.which(t) is None]
    if tools:
        pytest.skip(f"building txt2bin needs {', '.join(tools)}, not installed")
    sim = Path(src) / "src" / "LogGOPSim"
    out = tmp_path_factory.mktemp("txt2bin")
    for cmd in (
        ["re2c", "-o", str(out / "txt2bin.cpp"), str(sim / "txt2bin.re")],
        ["gengetopt", "-F", "txt2bin_cmdline", "-i", str(sim / "txt2bin_cmdline.ggo")],
        [
            "g++",
            "-O2",
            "-std=c++11",
            f"-I{sim}",
            f"-I{out}",
            "txt2bin.cpp",
            "txt2bin_cmdline.c",
            "-o",
            "txt2bin",
        ],
    ):
        subprocess.run(cmd, cwd=out, check=True, capture_output=True, timeout=300)
    return out / "txt2bin"


@pytest.mark.parametrize("name", ["loggops-example.goal", "plogpt-example.goal", "alltoall"])
def test_txt2bin_output_predicts_as_the_text(txt2bin: Path, cli, tmp_path: Path, name: str) -> None:
    if name == "alltoall":
        text = tmp_path / "a2a.goal"
        commodel.write_goal(commodel.collective("alltoall-pairwise", 16, "4KiB"), text)
    else:
        text = EXAMPLES / "schedules" / name
    bin_path = tmp_path / "s.bin"
    subprocess.run(
        [str(txt2bin), "-i", str(text), "-o", str(bin_path)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    a, b = commodel.read_goal(text), commodel.read_goal(bin_path)
    assert a.num_ops == b.num_ops
    same_prediction(cli, text, bin_path)
