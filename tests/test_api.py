"""The Python API: commodel.predict, schedules, typed results, errors, the engine stubs."""

from __future__ import annotations

import ast
import json
import re

import pytest

import commodel
from commodel import errors
from commodel.prediction import Message, Prediction, RankFinish, prediction_from_engine
from conftest import EXAMPLES, ROOT, needs_engine

GOLDEN_GOAL = EXAMPLES / "schedules" / "loggops-example.goal"


# --- no engine needed --------------------------------------------------------------------


def test_lazy_public_names() -> None:
    for name in ("predict", "read_goal", "parse_goal", "collective", "load_platform"):
        assert name in dir(commodel)
        assert name in commodel.__all__
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        _ = commodel.nonsense  # type: ignore[attr-defined]
    assert commodel.load_platform("nomura2007").nodes == 32


def test_each_public_name_is_one_thing() -> None:
    """``commodel.predict`` is the function even after its module is imported by name."""
    import importlib
    import types

    module = importlib.import_module("commodel.prediction")
    assert commodel.predict is module.predict
    assert isinstance(commodel.predict, types.FunctionType)
    assert isinstance(commodel.models, types.FunctionType)


def test_prediction_from_engine_dict() -> None:
    """The conversion of the engine's dict: picoseconds to seconds, tuples to Message."""
    result = {
        "model": "plogp",
        "makespan_ps": 3_000_000,
        "finish_ps": [3_000_000, 2_500_000, 3_000_000],
        "events": 12,
        "messages": [(0, 1, 1024, -1, 0, 2_000_000, False), (2, 0, 8, 5, 10, 3_000_000, True)],
        "rto_events": [{"src": 2, "dst": 0, "bytes": 8, "tag": 5, "at_ps": 10, "delay_ps": 7}],
    }
    p = prediction_from_engine(result, platform="x")
    assert p.makespan_s == 3e-6
    assert p.ranks == [
        RankFinish(0, 3e-6, 3_000_000),
        RankFinish(1, 2.5e-6, 2_500_000),
        RankFinish(2, 3e-6, 3_000_000),
    ]
    assert p.slowest_rank == RankFinish(0, 3e-6, 3_000_000)  # the lowest rank among ties
    assert p.messages[0] == Message(0, 1, 1024, -1, 0.0, 2e-6, False)
    assert p.messages[1].rto is True
    assert p.rto_events == [
        {"src": 2, "dst": 0, "bytes": 8, "tag": 5, "at_s": 1e-11, "delay_s": 7e-12}
    ]
    data = json.loads(p.to_json())
    assert data["ranks"][1] == {"rank": 1, "finish_s": 2.5e-6, "finish_ps": 2_500_000}
    assert data["messages"][0] == {
        "src": 0,
        "dst": 1,
        "bytes": 1024,
        "tag": -1,
        "start_s": 0.0,
        "end_s": 2e-6,
        "rto": False,
    }


def test_empty_prediction_has_no_slowest_rank() -> None:
    with pytest.raises(errors.ScheduleError):
        _ = Prediction("loggops", 0.0, []).slowest_rank


def test_unknown_model_before_anything_runs() -> None:
    with pytest.raises(errors.ModelError, match="unknown model 'nope'"):
        commodel.predict(GOLDEN_GOAL, "loggopsim-default", model="nope")


def test_missing_goal_file() -> None:
    with pytest.raises(errors.GoalError, match="missing.goal: no such schedule file"):
        commodel.read_goal("missing.goal")


@needs_engine
def test_engine_errors_are_commodel_errors_with_the_engine_message() -> None:
    """The engine raises the commodel.errors class itself, keeping its message."""
    goal = "num_ranks 2\nrank 0 {\nr1: recv 8b from 1\n}\nrank 1 {\n}\n"
    with pytest.raises(errors.DeadlockError) as info:
        commodel.predict(commodel.parse_goal(goal), "loggopsim-default")
    assert type(info.value) is errors.DeadlockError
    assert isinstance(info.value, errors.CommodelError)
    assert "r1" in str(info.value)


# --- engine-backed -----------------------------------------------------------------------


@needs_engine
def test_version_matches_the_crates() -> None:
    from commodel import _engine

    cargo = (ROOT / "Cargo.toml").read_text()
    version = re.search(r'^version = "([^"]+)"', cargo, re.M).group(1)
    assert commodel.__version__ == version == _engine.__version__


@needs_engine
def test_stub_matches_the_compiled_module() -> None:
    """Every public name of commodel._engine is in _engine.pyi, and the reverse (types that
    exist only for type checkers, such as the TypedDicts, aside)."""
    from commodel import _engine

    tree = ast.parse((ROOT / "python" / "commodel" / "_engine.pyi").read_text())
    stubbed = {
        node.name
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.ClassDef))
        and not node.name.startswith("_")
        and "type_check_only" not in {ast.unparse(d) for d in node.decorator_list}
    }
    compiled = {name for name in dir(_engine) if not name.startswith("_")}
    assert stubbed == compiled


@needs_engine
def test_predict_golden_loggops() -> None:
    p = commodel.predict(GOLDEN_GOAL, "loggopsim-default", model="loggops")
    assert isinstance(p, Prediction)
    assert [round(r.finish_s * 1e12) for r in p.ranks] == [543_780_000, 550_336_000]
    assert p.makespan_ps == 550_336_000
    assert p.slowest_rank.rank == 1
    assert all(isinstance(m, Message) for m in p.messages)
    assert sum(m.bytes for m in p.messages) == 2 * 65536 + 8
    assert p.platform == "loggopsim-default"


@needs_engine
def test_without_messages() -> None:
    p = commodel.predict(GOLDEN_GOAL, "loggopsim-default", record_messages=False)
    assert p.messages == []
    assert p.makespan_ps == 550_336_000


@pytest.mark.parametrize("ranks", [2, 8, 32])
@needs_engine
def test_plogp_alltoall_closed_forms(ranks: int) -> None:
    """PlogPT eq. 18 and 19 under plogp: A = (P-1)(g(m)+L), B = (P-1) g(m) + L, exactly."""
    platform = commodel.load_platform("loggopsim-default")
    m = 1024
    params = platform.engine_params("plogp")
    g, latency = params["g"][params["sizes"].index(m)], params["L"]
    a = commodel.collective("alltoall-xor-pairwise", ranks, m)
    b = commodel.collective("alltoall-xor-post-all", ranks, m)
    assert commodel.predict(a, platform, "plogp").makespan_ps == (ranks - 1) * (g + latency)
    assert commodel.predict(b, platform, "plogp").makespan_ps == (ranks - 1) * g + latency


@needs_engine
def test_hockney_one_message() -> None:
    goal = "num_ranks 2\nrank 0 {\ns: send 1000b to 1\n}\nrank 1 {\nr: recv 1000b from 0\n}\n"
    p = commodel.predict(commodel.parse_goal(goal), "loggopsim-default", model="hockney")
    # alpha + beta m = 7.992 us + 1000 * 8 ns
    assert p.makespan_ps == 7_992_000 + 1000 * 8_000


@needs_engine
def test_written_schedule_predicts_the_same(tmp_path) -> None:
    schedule = commodel.collective("bcast-binomial", 16, "64KiB")
    path = tmp_path / "b.goal"
    commodel.write_goal(schedule, path)
    again = commodel.read_goal(path)
    assert (again.num_ranks, again.num_ops, again.bytes_sent) == (
        schedule.num_ranks,
        schedule.num_ops,
        schedule.bytes_sent,
    )
    for model in ("loggops", "plogp", "hockney"):
        first = commodel.predict(schedule, "nomura2007", model)
        second = commodel.predict(again, "nomura2007", model)
        assert first.makespan_ps == second.makespan_ps
        assert first.ranks == second.ranks


@needs_engine
def test_goal_error_is_a_commodel_error() -> None:
    with pytest.raises(errors.GoalError) as info:
        commodel.parse_goal("num_ranks 1\nrank 0 {\nx: sned 8b to 0\n}\n", "bad.goal")
    assert isinstance(info.value, errors.CommodelError)
    assert str(info.value).startswith("bad.goal:3:")


@needs_engine
def test_deadlock_error_names_rank_and_label() -> None:
    goal = "num_ranks 2\nrank 0 {\nwaiting: recv 8b from 1 tag 3\n}\nrank 1 {\n}\n"
    with pytest.raises(errors.DeadlockError) as info:
        commodel.predict(commodel.parse_goal(goal), "loggopsim-default")
    assert "waiting" in str(info.value)
    assert "0" in str(info.value)


@needs_engine
def test_unknown_collective() -> None:
    with pytest.raises(errors.CollectiveError, match="alltoall-magic"):
        commodel.collective("alltoall-magic", 4, 8)


@needs_engine
def test_collective_catalog() -> None:
    names = dict(commodel.collective_names())
    assert "alltoall-xor-pairwise" in names and "alltoall-xor-post-all" in names
    assert all(summary for summary in names.values())


@needs_engine
def test_models_known_to_python_and_engine_agree() -> None:
    from commodel import _engine

    python_models = {name for name, _ in commodel.models()}
    assert {"loggops", "plogp", "hockney"} <= python_models
    assert python_models <= set(_engine.model_names())


@needs_engine
def test_demo_rows_are_the_plogp_closed_forms() -> None:
    """The demo's numbers: eq. 18 and 19 with nomura2007's g(m) table and L, P = 32."""
    from commodel.alltoall_ab import format_demo, run_demo

    platform = commodel.load_platform("nomura2007")
    params = platform.engine_params("plogp")
    sizes = [1024, 1048576]
    rows = run_demo(platform=platform, ranks=32, sizes=sizes, models=["plogp"])
    for row, m in zip(rows, sizes):
        g, latency = params["g"][params["sizes"].index(m)], params["L"]
        assert round(row.makespans["plogp"]["A"] * 1e12) == 31 * (g + latency)
        assert round(row.makespans["plogp"]["B"] * 1e12) == 31 * g + latency
        assert row.faster("plogp").startswith("B (")
    table = format_demo(rows, "nomura2007", 32)
    rows_text = [line.split() for line in table.splitlines()]
    assert ["1", "KiB", "1.511", "ms", "611.200", "us", "B", "(2.473x)"] in rows_text


def _subpackage_imports() -> dict[str, set[str]]:
    """Which subpackages of commodel each subpackage imports (lazy imports included)."""
    package = ROOT / "python" / "commodel"
    graph: dict[str, set[str]] = {}
    for path in package.rglob("*.py"):
        rel = path.relative_to(package).parts
        if len(rel) < 2 or path.name == "__main__.py":
            continue  # top-level modules; entry points may import the CLI
        here = rel[0]
        depth = len(rel) - 1  # directories between the package root and the file
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                up = depth - (node.level - 1)
                if up < 0:
                    continue
                base = list(rel[:up])
                target = base + (node.module.split(".") if node.module else [])
            elif node.module and node.module.startswith("commodel."):
                target = node.module.split(".")[1:]
            else:
                continue
            if target and target[0] != here and (package / target[0]).is_dir():
                graph.setdefault(here, set()).add(target[0])
    return graph


def test_no_import_loop_between_subpackages() -> None:
    graph = _subpackage_imports()

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in graph.get(start, ()):
            if nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt})):
                return True
        return False

    assert "validate" in graph["cli"] and "report" in graph["validate"]  # the scan sees imports
    loops = sorted(name for name in graph if reaches(name, name, {name}))
    assert loops == []


def test_module_names_say_one_thing() -> None:
    """``demo`` and ``study`` are the subcommands only (the study's code is a package of its
    own); no two ``compare`` modules."""
    package = ROOT / "python" / "commodel"
    names = {p.relative_to(package).as_posix() for p in package.rglob("*.py")}
    assert [n for n in names if n.endswith("demo.py")] == ["cli/demo.py"]
    assert [n for n in names if n.endswith("compare.py")] == []
    assert [n for n in names if n.endswith("study.py")] == ["cli/study.py"]
    assert [n for n in names if n.endswith("measured.py")] == ["validate/alltoall_measured.py"]
    assert not hasattr(commodel.errors, "GoalSyntaxError")


def test_function_names_say_one_thing() -> None:
    """Issue 41's functions of one name and two meanings have one each: ``tcp_section`` is
    the tcp campaign's section (``fit/tcp.py``), ``wire_bytes`` an IP packet's bytes on the
    wire (``cluster/wire.py``, as ``crates/commodel-serialize``'s ``port.rs``); no two
    ``format_result``."""
    package = ROOT / "python" / "commodel"
    defined: dict[str, list[str]] = {}
    for path in sorted(package.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef):
                defined.setdefault(node.name, []).append(path.relative_to(package).as_posix())
    assert defined["tcp_section"] == ["fit/tcp.py"]
    assert defined["wire_bytes"] == ["cluster/wire.py"]
    assert "format_result" not in defined
    assert defined["format_advice"] == ["report/advise_tables.py"]


def test_serialize_daemon_is_not_named_wire() -> None:
    """Issue 41: "wire" means bytes on the wire only. The frame daemon of ``shaping:
    serialize`` is ``crates/commodel-serialize`` (binary ``commodel-serialize``), launched by
    ``cluster/serialize.py``; ``cluster/wire.py`` holds the bytes and launches nothing."""
    crates = sorted(p.name for p in (ROOT / "crates").iterdir() if p.is_dir())
    assert "commodel-serialize" in crates
    assert [c for c in crates if "wire" in c] == []
    manifest = (ROOT / "crates" / "commodel-serialize" / "Cargo.toml").read_text(encoding="utf-8")
    assert 'name = "commodel-serialize"' in manifest
    package = ROOT / "python" / "commodel" / "cluster"
    wire = ast.parse((package / "wire.py").read_text(encoding="utf-8"))
    imported = {a.name for n in ast.walk(wire) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module or "" for n in ast.walk(wire) if isinstance(n, ast.ImportFrom)}
    assert not imported & {"subprocess", "signal", "os"}, "cluster/wire.py launches nothing"
    serialize = (package / "serialize.py").read_text(encoding="utf-8")
    assert 'BINARY = "commodel-serialize"' in serialize
    for path in sorted((ROOT / "python" / "commodel").rglob("*.py")):
        assert "commodel-wire" not in path.read_text(encoding="utf-8"), path


SIZE_TEXTS = ["8b", "8B", "8 b", "64KiB", "1MiB", "1GiB", "2kB", "2KB", "3MB", "1GB", "1TB"]
SIZE_TEXTS_REFUSED = ["64Kb", "64kb", "64kib", "1mb", "1Mb", "64K", "1.5KiB", "1e3", "64XB"]


@needs_engine
def test_one_size_grammar_in_goal_and_python() -> None:
    """``parse_size`` (command line, platform files, API) reads sizes as GOAL does."""
    from commodel.units import parse_size

    def goal_size(text: str) -> int:
        goal = f"num_ranks 2\nrank 0 {{\ns: send {text} to 1\n}}\nrank 1 {{\nr: recv {text} from 0\n}}\n"
        return commodel.parse_goal(goal).rank_ops(0)[0][3]

    for text in SIZE_TEXTS:
        assert parse_size(text) == goal_size(text), text
    for text in SIZE_TEXTS_REFUSED:
        with pytest.raises(errors.UnitsError):
            parse_size(text)
        with pytest.raises(errors.GoalError):
            goal_size(text)


@needs_engine
@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"ranks": -4}, "ranks must be a whole number from 1 to 4294967295, got -4"),
        ({"ranks": 2**40}, "ranks must be a whole number from 1 to 4294967295, got 1099511627776"),
        ({"ranks": "4"}, "ranks must be a whole number, got str"),
        ({"size": 2**70}, "collective: size: size 1.181e+21 bytes is too large"),
        ({"size": "64Kb"}, "collective: size: unknown size unit 'Kb'"),
        ({"seed": -3}, "seed must be a whole number from 0 to 18446744073709551615, got -3"),
        ({"seed": 10**23}, "seed must be a whole number from 0 to 18446744073709551615"),
        ({"root": 2**32}, "root must be a whole number from 0 to 4294967295, got 4294967296"),
        ({"segment": -1}, "collective: segment: a size must be >= 0 bytes, got -1"),
        ({"fanout": 0}, "fanout must be a whole number from 1 to 4294967295, got 0"),
        ({"reduce_ns_per_byte": float("inf")}, "reduce_ns_per_byte must be finite and >= 0"),
        ({"name": 7}, "collective: name must be a str, got int"),
        (
            {"fan_out": 2},
            "collective: unknown option 'fan_out'; options: root, seed, segment, degree, "
            "splits, max_requests, fanout, reduce_ns_per_byte",
        ),
    ],
)
def test_collective_arguments_are_named(arguments: dict, message: str) -> None:
    call = {"name": "random-pairs", "ranks": 4, "size": 8, **arguments}
    with pytest.raises(errors.CollectiveError) as info:
        commodel.collective(**call)
    assert message in str(info.value)


@needs_engine
def test_the_engine_checks_each_option_as_declared() -> None:
    """The bindings convert and check every option by its row of the engine's table."""
    from commodel import _engine

    with pytest.raises(errors.CollectiveError, match="collective: unknown option 'fan_out'"):
        _engine.collective("random-pairs", 4, 8, fan_out=2)
    with pytest.raises(errors.CollectiveError, match="fanout must be a whole number from 1"):
        _engine.collective("bcast-chain", 4, 8, fanout=0)
    with pytest.raises(errors.CollectiveError, match="degree must be a whole number from 1"):
        _engine.collective("random-pairs", 4, 8, degree=None)
    names = [spec[0] for spec in commodel.schedules.collective_options()]
    assert names == ["root", "seed", "segment", "degree", "splits", "max_requests", "fanout",
                     "reduce_ns_per_byte"]  # fmt: skip
    # the declared defaults are what the engine runs without the option
    plain = _engine.collective("gather-split", 6, 600).to_goal()
    defaults = {spec[0]: spec[4] for spec in commodel.schedules.collective_options()}
    assert _engine.collective("gather-split", 6, 600, **defaults).to_goal() == plain
    assert _engine.collective("gather-split", 6, 600, splits=3).to_goal() != plain


@needs_engine
def test_collective_fanout_reaches_the_engine() -> None:
    # bcast-chain on 9 ranks: 4 chains by default (the root sends 4 messages), 2 with fanout=2
    for fanout, root_sends in ((None, 4), (2, 2), (8, 8)):
        sched = commodel.collective("bcast-chain", 9, 1000, fanout=fanout)
        assert sched.bytes_sent == 8 * 1000
        assert [op[0] for op in sched.rank_ops(0)] == ["send"] * root_sends


@needs_engine
def test_predict_arguments_are_named() -> None:
    schedule = commodel.collective("alltoall-xor-pairwise", 4, 8)
    with pytest.raises(errors.ModelError, match=r"model must be a model name .* got int"):
        commodel.predict(schedule, "nomura2007", model=3)  # type: ignore[arg-type]
    with pytest.raises(errors.ScheduleError, match="schedule must be a Schedule .* got int"):
        commodel.predict(42, "nomura2007", "plogp")  # type: ignore[arg-type]
    with pytest.raises(errors.ModelError, match="record_messages must be True or False"):
        commodel.predict(schedule, "nomura2007", "plogp", record_messages=1)  # type: ignore[arg-type]


@needs_engine
def test_goal_text_that_is_not_utf8() -> None:
    with pytest.raises(errors.GoalError, match=r"<string>:3: not UTF-8 text"):
        commodel.parse_goal("num_ranks 1\nrank 0 {\n\udcff}\n")
    with pytest.raises(errors.GoalError, match="GOAL text must be a str, got bytes"):
        commodel.parse_goal(b"num_ranks 1")  # type: ignore[arg-type]


def test_import_commodel_does_not_import_numpy():
    """`import commodel` (and so `commodel --help`) stays light: numpy, matplotlib, duckdb
    are imported where they are used. The unprivileged cluster sandbox runs the system
    Python, which may have no numpy at all."""
    import subprocess
    import sys

    code = (
        "import sys, commodel, commodel.cli.main; "
        "print(sorted(m for m in ('numpy', 'matplotlib', 'duckdb', 'scipy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@needs_engine
def test_write_collective_to_any_output(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    from commodel.schedules import collective, write_collective

    whole = collective("allgather-bruck", 6, "3KiB").to_goal()
    target = tmp_path / "b.goal"
    counts = write_collective("allgather-bruck", 6, "3KiB", target)  # a PathLike
    # Bruck at P=6: 3 sendrecv steps per rank, 2 operations each; 1, 2, then the
    # remaining 6 - 4 = 2 blocks sent
    assert counts == (6, 6 * 3 * 2, 6 * (1 + 2 + 2) * 3072)
    assert target.read_text() == whole
    text = io.StringIO()  # a text stream without bytes underneath
    monkeypatch.setattr(sys, "stdout", text)
    assert write_collective("allgather-bruck", 6, "3KiB", "-") == counts
    assert text.getvalue() == whole
    missing = tmp_path / "no-such-dir" / "b.goal"
    with pytest.raises(errors.CommodelError, match=f"{re.escape(str(missing))}: cannot write: "):
        write_collective("allgather-bruck", 6, "3KiB", missing)
    with pytest.raises(errors.CollectiveError, match="ranks must be a whole number"):
        write_collective("allgather-bruck", 0, "3KiB", target)


def test_code_cites_docs_not_dated_study_folders() -> None:
    # Comments and docstrings point to docs/ (models.md, measurement.md, validation.md) or
    # to study/'s standing files, never to a dated study folder: the study is evidence
    # kept apart from the product, its folders are not a reference (issue 41).
    dated = re.compile(r"(study|docs/results)/\d{4}-\d{2}-\d{2}")
    sources = [*(ROOT / "python").rglob("*.py"), *(ROOT / "crates").glob("*/src/**/*.rs")]
    assert len(sources) > 100
    cited = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in sources
        for i, line in enumerate(p.read_text().splitlines(), start=1)
        if dated.search(line)
    ]
    assert not cited, cited
