"""Big outputs: the engine's message columns, the streamed JSON, Parquet, the summary JSON.

The golden files in tests/golden/ were written by ``commodel predict --json -o`` before the
messages crossed the binding as columns (one Python object per message, ``json.dumps`` of the
whole prediction); the streamed writer must reproduce them byte for byte.
"""

from __future__ import annotations

import io
import json
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import commodel
from commodel.message_table import MessageTable, seconds
from commodel.prediction import Message
from commodel.report.messages_out import (
    PARQUET_METADATA_KEY,
    summary_dict,
    write_json,
    write_parquet,
)
from commodel.schedules import collective, parse_goal
from conftest import EXAMPLES, ROOT, needs_engine

GOLDEN = Path(__file__).resolve().parent / "golden"
LOGGOPS_GOAL = EXAMPLES / "schedules" / "loggops-example.goal"

# (golden file, schedule, platform, model); the schedule is a GOAL file or a collective
CASES = [
    ("predict-loggops-example.json", LOGGOPS_GOAL, "loggopsim-default", "loggops"),
    # 8 RTOs: messages with "rto": true and rto_events
    (
        "predict-alltoall-post-all-8-plogpt.json",
        ("alltoall-xor-post-all", 8, 32768),
        "nomura2007",
        "plogpt",
    ),
]


def _predict(schedule, platform: str, model: str, **kwargs):
    if isinstance(schedule, tuple):
        name, ranks, size = schedule
        schedule = collective(name, ranks=ranks, size=size)
    return commodel.predict(schedule, platform, model=model, **kwargs)


def _goal_arg(schedule, tmp_path: Path) -> Path:
    if isinstance(schedule, tuple):
        name, ranks, size = schedule
        path = tmp_path / f"{name}.goal"
        collective(name, ranks=ranks, size=size).write_goal(str(path))
        return path
    return schedule


# --- the streamed JSON equals the old, whole-object JSON ---------------------------------


@needs_engine
@pytest.mark.parametrize("golden,schedule,platform,model", CASES)
def test_streamed_json_equals_the_golden_file(golden, schedule, platform, model) -> None:
    expected = (GOLDEN / golden).read_text()
    prediction = _predict(schedule, platform, model)
    out = io.StringIO()
    write_json(prediction, out)
    assert out.getvalue() == expected
    # the whole-object path over the same table agrees too
    assert prediction.to_json(indent=2) + "\n" == expected


@needs_engine
@pytest.mark.parametrize("golden,schedule,platform,model", CASES)
def test_cli_json_equals_the_golden_file(cli, tmp_path, golden, schedule, platform, model) -> None:
    expected = (GOLDEN / golden).read_text()
    goal = _goal_arg(schedule, tmp_path)
    out = tmp_path / "p.json"
    result = cli("predict", goal, "-p", platform, "-M", model, "--json", "-o", out)
    assert result.code == 0, result.err
    assert out.read_text() == expected
    result = cli("predict", goal, "-p", platform, "-M", model, "--json")
    assert result.out == expected


@needs_engine
def test_json_no_messages_is_the_rest_of_the_object(cli, tmp_path) -> None:
    golden, schedule, platform, model = CASES[1]
    full = json.loads((GOLDEN / golden).read_text())
    goal = _goal_arg(schedule, tmp_path)
    result = cli("predict", goal, "-p", platform, "-M", model, "--json", "--no-messages")
    assert result.code == 0, result.err
    summary = json.loads(result.out)
    assert "messages" not in summary
    del full["messages"]
    assert summary == full
    assert len(summary["rto_events"]) == 8


@needs_engine
def test_json_summary_follows_the_schema(cli, tmp_path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "docs" / "prediction.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    golden, schedule, platform, model = CASES[1]
    goal = _goal_arg(schedule, tmp_path)
    result = cli("predict", goal, "-p", platform, "-M", model, "--json", "--no-messages")
    summary = json.loads(result.out)
    assert list(validator.iter_errors(summary)) == []
    assert not validator.is_valid({**summary, "ranks": [{"rank": 0}]})
    assert not validator.is_valid({**summary, "messages": "none"})


def test_no_messages_needs_json(cli) -> None:
    result = cli("predict", LOGGOPS_GOAL, "-p", "loggopsim-default", "--no-messages")
    assert result.code == 2
    assert "--no-messages" in result.err and "--json" in result.err


def test_parquet_options_are_checked_before_the_simulation(cli, tmp_path) -> None:
    base = ("predict", LOGGOPS_GOAL, "-p", "loggopsim-default")
    result = cli(*base, "--parquet", tmp_path / "missing" / "m.parquet")
    assert result.code == 2
    assert result.err.startswith(f"commodel: error: --parquet {tmp_path / 'missing'}")
    for extra in (("-M", "all"), ("--samples", "3")):
        result = cli(*base, *extra, "--parquet", tmp_path / "m.parquet")
        assert result.code == 2 and "choose the model with --model NAME" in result.err
    assert not (tmp_path / "m.parquet").exists()


@needs_engine
def test_json_writer_memory_does_not_grow_with_the_messages() -> None:
    """65280 messages: the whole-object path holds a dict per message (tens of MB);
    the streamed writer holds one chunk of rows at a time."""
    prediction = _predict(("alltoall-xor-pairwise", 256, 1024), "loggopsim-default", "loggops")
    assert len(prediction.messages) == 256 * 255

    class Sink(io.TextIOBase):
        written = 0

        def write(self, text: str) -> int:
            self.written += len(text)
            return len(text)

    sink = Sink()
    tracemalloc.start()
    try:
        write_json(prediction, sink)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sink.written > 256 * 255 * 150  # every message was written
    assert peak < 16 * 2**20, f"peak {peak / 2**20:.1f} MiB"


@needs_engine
@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_failed_json_write_names_the_file(cli) -> None:
    result = cli("predict", LOGGOPS_GOAL, "-p", "loggopsim-default", "--json", "-o", "/dev/full")
    assert result.code == 2
    assert result.err.startswith("commodel: error: /dev/full: cannot write: No space left")


# --- Parquet ------------------------------------------------------------------------------


@needs_engine
def test_parquet_round_trip(cli, tmp_path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    golden, schedule, platform, model = CASES[1]
    full = json.loads((GOLDEN / golden).read_text())
    goal = _goal_arg(schedule, tmp_path)
    out = tmp_path / "m.parquet"
    result = cli("predict", goal, "-p", platform, "-M", model, "--parquet", out)
    assert result.code == 0, result.err
    assert "makespan  203.276 ms" in result.out  # the summary is still printed
    table = pq.read_table(out)
    assert table.column_names == [
        "src",
        "dst",
        "bytes",
        "tag",
        "start_s",
        "end_s",
        "rto",
        "start_ps",
        "end_ps",
    ]
    rows = table.to_pylist()
    keys = ("src", "dst", "bytes", "tag", "start_s", "end_s", "rto")
    assert [{k: r[k] for k in keys} for r in rows] == full["messages"]
    assert [r["end_ps"] for r in rows] == [round(m["end_s"] * 1e12) for m in full["messages"]]
    assert sum(r["rto"] for r in rows) == 8
    meta = json.loads(table.schema.metadata[PARQUET_METADATA_KEY])
    del full["messages"]
    assert meta == full


@needs_engine
def test_parquet_reads_in_duckdb(tmp_path) -> None:
    pytest.importorskip("pyarrow")
    duckdb = pytest.importorskip("duckdb")
    schedule = collective("alltoall-xor-pairwise", ranks=16, size=4096)
    prediction = commodel.predict(schedule, "nomura2007", model="plogp")
    out = tmp_path / "m.parquet"
    write_parquet(prediction, str(out), rows=100)  # several row groups
    query = f"SELECT count(*), sum(bytes), max(end_ps) FROM '{out}'"
    count, total, last = duckdb.connect().execute(query).fetchall()[0]
    assert (count, total) == (16 * 15, schedule.bytes_sent)
    assert last == prediction.makespan_ps  # every rank ends with a receive


@needs_engine
def test_parquet_of_an_empty_run_has_the_columns(tmp_path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    empty = parse_goal("num_ranks 1\nrank 0 {\n}\n")
    prediction = commodel.predict(empty, "loggopsim-default")
    write_parquet(prediction, str(tmp_path / "e.parquet"))
    table = pq.read_table(tmp_path / "e.parquet")
    assert table.num_rows == 0 and table.schema.field("end_ps").type == "uint64"


@needs_engine
def test_parquet_write_error_names_the_file(tmp_path) -> None:
    pytest.importorskip("pyarrow")
    from commodel.errors import CommodelError

    prediction = commodel.predict(LOGGOPS_GOAL, "loggopsim-default")
    bad = tmp_path / "no-such-dir" / "m.parquet"
    with pytest.raises(CommodelError, match="no-such-dir/m.parquet: cannot write"):
        write_parquet(prediction, str(bad))


# --- the message table over the engine's columns ------------------------------------------


@needs_engine
def test_message_table_reads_like_a_list() -> None:
    p = commodel.predict(LOGGOPS_GOAL, "loggopsim-default")
    table = p.messages
    assert isinstance(table, MessageTable) and len(table) == 3
    as_list = list(table)
    assert as_list[2] == Message(0, 1, 8, 8, 0.00054228, 0.000550336, False)
    assert table[-1] == as_list[2] and table[0] == as_list[0]
    assert table[1:] == as_list[1:] and table[::2] == as_list[::2]
    assert table == as_list and table != as_list[:2]
    with pytest.raises(IndexError, match="message index 3 out of range"):
        table[3]
    assert table.column("end_ps").tolist() == [532_280_000, 532_280_000, 550_336_000]
    assert table.column("tag", 1).tolist() == [7, 8]
    assert table.column("rto").dtype == bool
    assert summary_dict(p)["makespan_ps"] == 550_336_000


@needs_engine
def test_engine_columns_clamp_and_name_bad_fields() -> None:
    from commodel import _engine

    schedule = collective("alltoall-xor-pairwise", ranks=4, size=8)
    result = _engine.simulate(schedule, "plogp", _plogp_params())
    columns = result["messages"]
    assert len(columns) == 12
    assert _engine.MessageColumns.fields == [
        "src",
        "dst",
        "bytes",
        "tag",
        "start_ps",
        "end_ps",
        "rto",
    ]
    assert np.frombuffer(columns.column("bytes"), np.uint64).tolist() == [8] * 12
    src = np.frombuffer(columns.column("src"), np.uint64)
    assert sorted(src.tolist()) == [r for r in range(4) for _ in range(3)]
    assert columns.column("src", 10, 99) == src[10:].tobytes()  # stop clamped
    assert columns.column("src", 20) == b""
    with pytest.raises(ValueError, match='no message field "size"; fields: src, dst'):
        columns.column("size")


def _plogp_params() -> dict:
    return commodel.load_platform("nomura2007").engine_params("plogp")


def test_seconds_is_exactly_ps_to_seconds_beyond_2_53() -> None:
    """float(ps) / 1e12 rounds twice above 2**53 ps; these values would differ by an ulp."""
    ps = [0, 1, 999_999_999_999, 2**53 - 1, 9_007_199_254_740_993, 1_152_921_504_606_847_070]
    got = seconds(np.array(ps, dtype=np.uint64)).tolist()
    assert got == [p / 10**12 for p in ps]
