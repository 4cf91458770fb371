"""The `commodel` command: exit codes, error messages, predict output, the LogGOPS golden case."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import commodel.cli as cli_package
from conftest import EXAMPLES, ROOT, needs_engine

# `commodel.cli.main` the attribute is the entry-point function; this is the module
cli_main = importlib.import_module("commodel.cli.main")

GOLDEN_GOAL = EXAMPLES / "schedules" / "loggops-example.goal"
LOGGOPSIM_DEFAULT = EXAMPLES / "platforms" / "loggopsim-default.yaml"


# --- no engine needed --------------------------------------------------------------------


def test_help_teaches(cli) -> None:
    result = cli("--help")
    assert result.code == 0
    for text in ("pipeline:", "examples:", "schedule", "predict", "demo", "docs/formats.md"):
        assert text in result.out


def test_version(cli) -> None:
    import commodel

    result = cli("--version")
    assert result.code == 0
    assert result.out.strip() == f"commodel {commodel.__version__}"


def test_no_subcommand_is_a_usage_error(cli) -> None:
    result = cli()
    assert result.code == 2
    assert "a subcommand is required" in result.err


def test_unknown_subcommand(cli) -> None:
    result = cli("predcit")
    assert result.code == 2
    assert "invalid choice: 'predcit'" in result.err


def test_subcommand_help(cli) -> None:
    for name in ("schedule", "predict", "demo"):
        result = cli(name, "--help")
        assert result.code == 0, name
        assert f"commodel {name}" in result.out


def test_predict_requires_platform(cli) -> None:
    result = cli("predict", str(GOLDEN_GOAL))
    assert result.code == 2
    assert "--platform" in result.err


def test_predict_missing_schedule_file_is_named(cli, tmp_path: Path) -> None:
    missing = tmp_path / "nope.goal"
    result = cli("predict", missing, "--platform", "loggopsim-default")
    assert result.code == 2
    assert result.err == f"commodel: error: {missing}: no such schedule file\n"


def test_predict_unknown_model(cli) -> None:
    result = cli("predict", GOLDEN_GOAL, "--platform", "nomura2007", "--model", "logp")
    assert result.code == 2
    assert result.err.startswith("commodel: error: unknown model 'logp' (known: ")
    assert "loggops" in result.err and "Traceback" not in result.err


def test_predict_bad_platform_names_file_and_field(cli, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("commodel_platform: 1\nname: bad\nnodes: 2\nhockney: {alpha: -1, beta: 0}\n")
    result = cli("predict", GOLDEN_GOAL, "--platform", bad, "--model", "hockney")
    assert result.code == 2
    assert result.err == (f"commodel: error: {bad}: hockney.alpha: must be >= 0 seconds, got -1\n")


def test_predict_platform_without_the_models_section(cli, tmp_path: Path) -> None:
    only_hockney = tmp_path / "h.yaml"
    only_hockney.write_text(
        "commodel_platform: 1\nname: h\nnodes: 2\nhockney: {alpha: 1, beta: 0}\n"
    )
    result = cli("predict", GOLDEN_GOAL, "--platform", only_hockney, "--model", "plogp")
    assert result.code == 2
    assert result.err == (
        f"commodel: error: platform h ({only_hockney}) has no `plogp` section; "
        "model plogp needs it\n"
    )


def test_schedule_bad_size(cli) -> None:
    result = cli("schedule", "alltoall-xor-pairwise", "--ranks", "4", "--size", "64K")
    assert result.code == 2
    assert "ambiguous size '64K'" in result.err


def test_schedule_missing_arguments(cli) -> None:
    result = cli("schedule", "alltoall-xor-pairwise")
    assert result.code == 2
    assert "missing --ranks, --size (or use --list)" in result.err


def test_schedule_negative_ranks(cli) -> None:
    result = cli("schedule", "bcast-binomial", "--ranks", "-3", "--size", "8")
    assert result.code == 2


def test_schedule_fanout_and_two_proc_errors(cli) -> None:
    # bcast-chain with 2 chains on 5 ranks: 0 -> 1 -> 2, 0 -> 3 -> 4
    result = cli("schedule", "bcast-chain", "--ranks", "5", "--size", "8", "--fanout", "2")
    assert result.code == 0, result.err
    rank0 = result.out.split("rank 1")[0]
    assert "send 8b to 1" in rank0 and "send 8b to 3" in rank0 and "to 2" not in rank0
    result = cli("schedule", "bcast-chain", "--ranks", "5", "--size", "8", "--fanout", "0")
    assert result.code == 2
    result = cli("schedule", "barrier-two-proc", "--ranks", "3", "--size", "0")
    assert result.code == 2
    assert result.err == (
        "commodel: error: barrier-two-proc: needs exactly 2 ranks "
        "(Open MPI's two_procs algorithm), got 3\n"
    )


def test_unexpected_error_asks_for_a_report(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    import commodel.platform

    def broken(_name: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.delenv("COMMODEL_DEBUG", raising=False)
    monkeypatch.setattr(commodel.platform, "load_platform", broken)
    result = cli("predict", GOLDEN_GOAL, "--platform", "nomura2007")
    assert result.code == 1
    assert "commodel: internal error: RuntimeError: boom" in result.err
    assert "please report it" in result.err
    assert "Traceback" not in result.err


def test_debug_shows_the_traceback(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    import commodel.platform

    def broken(_name: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setenv("COMMODEL_DEBUG", "1")
    monkeypatch.setattr(commodel.platform, "load_platform", broken)
    with pytest.raises(RuntimeError, match="boom"):
        cli_main.main(["predict", str(GOLDEN_GOAL), "--platform", "nomura2007"])


def test_interrupt_exits_130(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    import commodel.platform

    def interrupted(_name: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(commodel.platform, "load_platform", interrupted)
    result = cli("predict", GOLDEN_GOAL, "--platform", "nomura2007")
    assert result.code == 130
    assert result.err == "commodel: interrupted\n"


def test_missing_optional_dependency_fails_only_that_subcommand(
    cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A subcommand whose module needs an uninstalled package: a message, exit 2."""
    (tmp_path / "needsdep.py").write_text("import not_installed_dependency_xyz\n")
    monkeypatch.setattr(cli_package, "__path__", [*cli_package.__path__, str(tmp_path)])
    monkeypatch.setattr(cli_main, "SUBCOMMANDS", [*cli_main.SUBCOMMANDS, "needsdep"])
    monkeypatch.delitem(sys.modules, "commodel.cli.needsdep", raising=False)
    assert cli("--help").code == 0
    result = cli("needsdep", "--anything")
    assert result.code == 2
    assert result.err == (
        "commodel: error: the Python module 'not_installed_dependency_xyz' is not installed "
        "(needed for commodel needsdep); install it with: pip install "
        "not_installed_dependency_xyz\n"
    )


def test_help_does_not_import_heavy_modules() -> None:
    code = (
        "import sys; from commodel.cli.main import build_parser; build_parser(); "
        "heavy = [m for m in ('matplotlib', 'mpi4py', 'duckdb', 'scipy') if m in sys.modules]; "
        "print(heavy)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=_env()
    )
    assert out.stdout.strip() == "[]"


@needs_engine
def test_predict_loads_only_what_it_uses() -> None:
    """`commodel predict` imports its own subcommand, not the other nine, nor
    importlib.metadata (about 6 MiB resident, for the version only); `--help` lists all."""
    code = (
        "import sys; from commodel.cli.main import main; "
        f"main(['predict', {str(GOLDEN_GOAL)!r}, '--platform', 'loggopsim-default']); "
        "print(sorted(m for m in sys.modules if m.startswith('commodel.cli.') "
        "or m == 'importlib.metadata'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=_env()
    )
    loaded = out.stdout.strip().splitlines()[-1]
    assert loaded == "['commodel.cli.common', 'commodel.cli.main', 'commodel.cli.predict']"


def test_help_before_a_subcommand_lists_them_all(cli) -> None:
    result = cli("--help", "predict")
    assert result.code == 0
    for name in cli_main.SUBCOMMANDS:
        assert f"\n    {name} " in result.out or f"\n    {name}\n" in result.out


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "python"), env.get("PYTHONPATH", "")])
    return env


def test_python_dash_m() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "commodel", "--version"],
        capture_output=True,
        text=True,
        env=_env(),
    )
    assert out.returncode == 0
    assert out.stdout.startswith("commodel ")


# --- engine-backed -----------------------------------------------------------------------


@needs_engine
def test_loggops_golden_example_json(cli) -> None:
    """The reference LogGOPS example: rank 0 finishes at 543780 ns, rank 1 at 550336 ns."""
    result = cli(
        "predict", GOLDEN_GOAL, "--platform", LOGGOPSIM_DEFAULT, "--model", "loggops", "--json"
    )
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["model"] == "loggops"
    assert [r["rank"] for r in data["ranks"]] == [0, 1]
    assert [round(r["finish_s"] * 1e12) for r in data["ranks"]] == [543_780_000, 550_336_000]
    assert round(data["makespan_s"] * 1e12) == 550_336_000
    assert data["makespan_ps"] == 550_336_000


@needs_engine
def test_loggops_golden_example_summary(cli) -> None:
    result = cli("predict", GOLDEN_GOAL, "--platform", "loggopsim-default", "--model", "loggops")
    assert result.code == 0, result.err
    assert "makespan  550.336 us" in result.out
    assert "slowest   rank 1" in result.out
    lines = [line.split() for line in result.out.splitlines()]
    assert ["0", "543.780", "us"] in lines
    assert ["1", "550.336", "us"] in lines


@needs_engine
def test_predict_json_fields(cli) -> None:
    result = cli("predict", GOLDEN_GOAL, "--platform", "loggopsim-default", "--json")
    data = json.loads(result.out)
    assert {"model", "makespan_s", "ranks", "messages", "rto_events"} <= set(data)
    assert isinstance(data["makespan_s"], float)
    assert data["rto_events"] == []
    # three messages: 64 KiB each way and the 8-byte one; every byte is accounted for
    assert len(data["messages"]) == 3
    for message in data["messages"]:
        assert set(message) == {"src", "dst", "bytes", "tag", "start_s", "end_s", "rto"}
        assert message["rto"] is False
        assert 0 <= message["start_s"] <= message["end_s"] <= data["makespan_s"]
    assert sorted((m["src"], m["dst"], m["bytes"], m["tag"]) for m in data["messages"]) == [
        (0, 1, 8, 8),
        (0, 1, 65536, 7),
        (1, 0, 65536, 7),
    ]
    # By hand (ns): each 64 KiB message starts at 0, arrives at o + L = 6500, and the
    # receiver's CPU takes o + (s-1)G = 1500 + 65535 * 8: it ends at 532280. Rank 0 then
    # computes 10000 and sends 8 B at 542280, which ends at 542280 + o + L + o + 7G.
    times = sorted((round(m["start_s"] * 1e9), round(m["end_s"] * 1e9)) for m in data["messages"])
    assert times == [(0, 532_280), (0, 532_280), (542_280, 550_336)]


@needs_engine
def test_predict_output_file_and_stdin(cli, tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "p.json"
    result = cli("predict", GOLDEN_GOAL, "-p", "loggopsim-default", "--json", "-o", out)
    assert result.code == 0 and result.out == ""
    assert json.loads(out.read_text())["makespan_ps"] == 550_336_000
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO(GOLDEN_GOAL.read_text()))
    result = cli("predict", "-", "-p", "loggopsim-default", "--json")
    assert json.loads(result.out)["makespan_ps"] == 550_336_000


@needs_engine
def test_bad_goal_file_names_file_line_column(cli, tmp_path: Path) -> None:
    bad = tmp_path / "bad.goal"
    bad.write_text("num_ranks 1\nrank 0 {\nx: sned 8b to 0\n}\n")
    result = cli("predict", bad, "--platform", "loggopsim-default")
    assert result.code == 2
    assert result.err.startswith(f"commodel: error: {bad}:3:")
    assert "Traceback" not in result.err


@needs_engine
def test_goal_read_in_parts_predicts_and_fails_as_on_one_thread(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    goal = tmp_path / "a2a.goal"
    assert (
        cli("schedule", "alltoall-pairwise", "--ranks", "9", "--size", "1KiB", "-o", goal).code == 0
    )
    text = goal.read_text()
    bad = tmp_path / "bad.goal"
    bad.write_text(text.replace("rank 7 {\n", "rank 7 {\nx: send 8b to 9\n"))
    outcomes = []
    for parts in ("1", "3", "7"):
        monkeypatch.setenv("COMMODEL_PARSE_THREADS", parts)
        good = cli("predict", goal, "--platform", "loggopsim-default", "--json")
        failed = cli("predict", bad, "--platform", "loggopsim-default")
        assert (good.code, failed.code) == (0, 2)
        outcomes.append((good.out, failed.err))
    assert outcomes[1] == outcomes[0] and outcomes[2] == outcomes[0]
    line = text[: text.index("rank 7 {")].count("\n") + 2
    assert outcomes[0][1].startswith(
        f"commodel: error: {bad}:{line}:15: send to rank 9 out of range"
    )


@needs_engine
def test_deadlock_is_exit_2(cli, tmp_path: Path) -> None:
    stuck = tmp_path / "stuck.goal"
    stuck.write_text("num_ranks 2\nrank 0 {\nr1: recv 8b from 1 tag 0\n}\nrank 1 {\n}\n")
    result = cli("predict", stuck, "--platform", "loggopsim-default")
    assert result.code == 2
    assert "r1" in result.err


@needs_engine
def test_schedule_then_predict(cli, tmp_path: Path) -> None:
    goal = tmp_path / "a2a.goal"
    result = cli("schedule", "alltoall-xor-pairwise", "--ranks", "8", "--size", "1KiB", "-o", goal)
    assert result.code == 0, result.err
    assert result.err.startswith(f"wrote {goal}: alltoall-xor-pairwise, 8 ranks, ")
    assert goal.read_text().startswith("num_ranks 8\n")
    result = cli("predict", goal, "--platform", "loggopsim-default", "--model", "plogp", "--json")
    data = json.loads(result.out)
    assert len(data["messages"]) == 8 * 7
    assert sum(m["bytes"] for m in data["messages"]) == 8 * 7 * 1024


@needs_engine
@pytest.mark.parametrize(
    ("name", "ranks", "flags"),
    [
        ("alltoall-pairwise", 16, ()),
        ("allreduce-rabenseifner", 12, ("--reduce-ns-per-byte", "0.25")),
        ("bcast-pipeline", 9, ("--root", "4", "--segment", "300")),
        # these two go back to earlier ranks: built whole, then written
        ("gather-split", 8, ("--splits", "3", "--root", "5")),
        ("random-pairs", 8, ("--degree", "3", "--seed", "11")),
    ],
)
def test_schedule_streams_the_text_of_the_whole_schedule(
    cli, tmp_path: Path, name: str, ranks: int, flags: tuple[str, ...]
) -> None:
    from commodel.schedules import collective

    opts = dict(zip((f[2:].replace("-", "_") for f in flags[::2]), flags[1::2]))
    whole = collective(
        name,
        ranks,
        "1000",
        **{k: (float(v) if k == "reduce_ns_per_byte" else int(v)) for k, v in opts.items()},
    )
    goal = tmp_path / "s.goal"
    result = cli("schedule", name, "-P", ranks, "-m", "1000", *flags, "-o", goal)
    assert result.code == 0, result.err
    assert goal.read_text() == whole.to_goal()
    assert result.err.startswith(
        f"wrote {goal}: {name}, {ranks} ranks, {whole.num_ops} operations, "
    )
    result = cli("schedule", name, "-P", ranks, "-m", "1000", *flags)
    assert (result.code, result.out, result.err) == (0, whole.to_goal(), "")


@needs_engine
def test_schedule_that_cannot_be_generated_leaves_the_output_file_alone(
    cli, tmp_path: Path
) -> None:
    goal = tmp_path / "keep.goal"
    goal.write_text("num_ranks 1\nrank 0 {\n}\n")
    result = cli("schedule", "alltoall-xor-pairwise", "-P", "6", "-m", "8", "-o", goal)
    assert result.code == 2
    assert "needs a power-of-two number of ranks, got 6 (nearest: 4 or 8)" in result.err
    assert goal.read_text() == "num_ranks 1\nrank 0 {\n}\n"
    fresh = tmp_path / "fresh.goal"
    result = cli("schedule", "gather-split", "-P", "4", "-m", "2", "--splits", "3", "-o", fresh)
    assert result.code == 2 and "more sub-gathers than bytes" in result.err
    assert not fresh.exists()


@needs_engine
def test_schedule_list(cli) -> None:
    result = cli("schedule", "--list")
    assert result.code == 0
    names = {line.split()[0] for line in result.out.splitlines()[2:] if line.strip()}
    assert {"alltoall-xor-pairwise", "alltoall-xor-post-all"} <= names


@needs_engine
def test_schedule_unknown_collective(cli) -> None:
    result = cli("schedule", "alltoall-magic", "--ranks", "4", "--size", "8")
    assert result.code == 2
    assert "alltoall-magic" in result.err


@needs_engine
def test_many_ranks_summary_shows_the_ten_slowest(cli, tmp_path: Path) -> None:
    goal = tmp_path / "bcast.goal"
    cli("schedule", "bcast-binomial", "--ranks", "64", "--size", "1KiB", "-o", goal)
    result = cli("predict", goal, "--platform", "loggopsim-default")
    assert result.code == 0, result.err
    assert "the 10 slowest of 64 ranks:" in result.out
    table = result.out.split("the 10 slowest of 64 ranks:")[1].strip().splitlines()[2:]
    assert len(table) == 10


@needs_engine
def test_demo_prints_the_table(cli) -> None:
    result = cli("demo", "--ranks", "4")
    assert result.code == 0, result.err
    assert "alltoall-xor-pairwise" in result.out and "alltoall-xor-post-all" in result.out
    rows = [
        line
        for line in result.out.splitlines()
        if line.split()[:1] and line.split()[1:2] and line.split()[1] in ("KiB", "MiB")
    ]
    assert len(rows) == 11  # 1 KiB .. 1 MiB


# --- the command line contract: inputs, seeds, outputs -----------------------------------


@needs_engine
def test_binary_stdin_is_a_goal_error(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    garbage = bytes(range(128, 256)) * 4
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(garbage), encoding="utf-8"))
    result = cli("predict", "-", "-p", "nomura2007")
    assert result.code == 2
    assert "commodel: error: <stdin>:1: not UTF-8 text (byte 0" in result.err


@pytest.mark.parametrize(
    ("value", "message"),
    [("-3", "must be >= 0, got -3"), ("99999999999999999999999", "must be at most 2**64 - 1")],
)
def test_one_seed_rule_for_every_subcommand(cli, value: str, message: str) -> None:
    for command in (
        ("predict", GOLDEN_GOAL, "-p", "loggopsim-default", "--samples", "2"),
        ("schedule", "random-pairs", "--ranks", "4", "--size", "8"),
        ("validate", "random", "--platform", "x.yaml"),
    ):
        result = cli(*command, "--seed", value)
        assert result.code == 2, command
        assert f"argument --seed: {message}" in result.err, command


def test_seed_without_samples_is_refused(cli) -> None:
    result = cli("predict", GOLDEN_GOAL, "-p", "loggopsim-default", "--seed", "3")
    assert result.code == 2
    assert "--seed is the first seed of --samples" in result.err


def test_samples_seeds_must_stay_below_two_to_the_64(cli) -> None:
    seed = str(2**64 - 2)
    result = cli(
        "predict", GOLDEN_GOAL, "-p", "loggopsim-default", "--samples", "3", "--seed", seed
    )
    assert result.code == 2
    assert "the last seed would pass 2**64 - 1" in result.err


def test_samples_refuses_what_it_would_ignore(cli) -> None:
    base = ("predict", GOLDEN_GOAL, "-p", "loggopsim-default", "--samples", "2")
    result = cli(*base, "--model", "all")
    assert result.code == 2 and "--samples runs one model" in result.err
    result = cli(*base, "--json")
    assert result.code == 2 and "--json and --gantt show one run" in result.err


def test_output_paths_are_checked_before_the_schedule_is_read(cli, tmp_path: Path) -> None:
    # the schedule does not exist: an error about the output shows it is checked first
    missing = tmp_path / "missing.goal"
    for flags, message in (
        (("--gantt", "/nonexistent/x.png"), "--gantt /nonexistent/x.png: directory /nonexistent"),
        (("--gantt", tmp_path / "out.txt"), "out.txt: suffix .txt; a picture is written as one"),
        (("-o", "/nonexistent/x.json"), "-o /nonexistent/x.json: directory /nonexistent does"),
        (("-o", tmp_path), "is a directory, not a file"),
    ):
        result = cli("predict", missing, "-p", "nomura2007", *flags)
        assert result.code == 2, flags
        assert message in result.err, (flags, result.err)
    result = cli("schedule", "bcast-binomial", "-P", "4", "-m", "8", "-o", "/nonexistent/a.goal")
    assert result.code == 2 and "directory /nonexistent does not exist" in result.err


def test_size_grammar_of_goal_on_the_command_line(cli) -> None:
    result = cli("schedule", "alltoall-xor-pairwise", "--ranks", "4", "--size", "64Kb")
    assert result.code == 2
    assert "unknown size unit 'Kb' in '64Kb' (known, case-sensitive" in result.err


@needs_engine
def test_collective_arguments_out_of_range(cli) -> None:
    result = cli("schedule", "alltoall-xor-pairwise", "--ranks", str(2**40), "--size", "8")
    assert result.code == 2
    assert "ranks must be a whole number from 1 to 4294967295, got 1099511627776" in result.err


@needs_engine
def test_model_all_json_has_one_object_per_model(cli) -> None:
    result = cli("predict", GOLDEN_GOAL, "-p", "loggopsim-default", "--model", "all", "--json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["model"] == "all" and data["platform"] == "loggopsim-default"
    assert sorted(data["predictions"]) == ["hockney", "loggops", "plogp"]
    assert data["predictions"]["loggops"]["makespan_ps"] == 550_336_000
    assert len(data["predictions"]["plogp"]["messages"]) == 3
    assert data["skipped"]["plogpt"] == "no `network` section"


@needs_engine
def test_model_all_gantt_draws_one_picture_per_model(cli, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    result = cli(
        "predict",
        GOLDEN_GOAL,
        "-p",
        "loggopsim-default",
        "-M",
        "all",
        "--gantt",
        tmp_path / "t.png",
    )
    assert result.code == 0, result.err
    drawn = sorted(p.name for p in tmp_path.iterdir())
    assert drawn == ["t-hockney.png", "t-loggops.png", "t-plogp.png"]
    assert all((tmp_path / name).read_bytes()[:4] == b"\x89PNG" for name in drawn)


@needs_engine
def test_demo_skips_the_models_the_platform_cannot_run(cli) -> None:
    result = cli("demo", "-p", "loggopsim-default", "--ranks", "4")
    assert result.code == 0, result.err
    header = next(line for line in result.out.splitlines() if line.strip().startswith("size"))
    assert header.split()[1:] == ["A", "plogp", "B", "plogp", "faster", "(plogp)"]
    assert "skipped plogpt: no `network` section" in result.out
    assert "skipped maxmin: no `network` section" in result.out


# --- docs/prediction.schema.json describes what --json writes ----------------------------


@pytest.fixture(scope="module")
def prediction_schema():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "docs" / "prediction.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@needs_engine
def test_json_outputs_follow_the_schema(cli, prediction_schema, tmp_path: Path) -> None:
    a2a = tmp_path / "a2a.goal"
    assert cli("schedule", "alltoall-xor-post-all", "-P", "8", "-m", "64KiB", "-o", a2a).code == 0
    outputs = [
        cli("predict", GOLDEN_GOAL, "-p", "loggopsim-default", "--json").out,
        cli("predict", a2a, "-p", "nomura2007", "-M", "plogpt", "--json").out,
        cli("predict", a2a, "-p", "nomura2007", "-M", "all", "--json").out,
        cli("predict", GOLDEN_GOAL, "-p", "loggopsim-default", "-M", "all", "--json").out,
    ]
    documents = [json.loads(text) for text in outputs]
    assert documents[1]["rto_events"], "the plogpt case must exercise rto_events"
    for document in documents:
        assert list(prediction_schema.iter_errors(document)) == []
    # and the schema does refuse what breaks the contract
    broken = json.loads(outputs[0])
    del broken["ranks"][0]["finish_s"]
    assert not prediction_schema.is_valid(broken)
    broken = json.loads(outputs[2])
    broken["predictions"]["plogp"]["messages"][0]["rto"] = "no"
    assert not prediction_schema.is_valid(broken)
    assert not prediction_schema.is_valid({**json.loads(outputs[0]), "model": "all"})


def test_exit_codes_are_written_down(cli) -> None:
    """``commodel --help`` and the README list the same exit codes with the same meaning."""
    import re

    help_text = cli("--help").out.split("exit codes:\n", 1)[1]
    in_help = dict(re.findall(r"^  (\d+)\s+(\S[^\n]*)", help_text, re.M))
    readme = (ROOT / "README.md").read_text()
    in_readme = dict(re.findall(r"^\| (\d+) \| ([^|]*?) \|$", readme, re.M))
    assert sorted(in_help, key=int) == ["0", "1", "2", "130"]
    assert sorted(in_readme, key=int) == sorted(in_help, key=int)
    for code, meaning in in_help.items():
        assert in_readme[code].replace("`", "").startswith(meaning.rstrip(";")), code


def test_no_help_text_shows_a_doubled_percent_sign():
    """argparse %-formats `help=` strings but not descriptions: a "%%" written into a
    description is shown as it is. Every parser and subparser, formatted."""
    import argparse

    from commodel.cli.main import build_parser

    todo, seen = [build_parser()], 0
    while todo:
        parser = todo.pop()
        seen += 1
        text = parser.format_help()
        assert "%%" not in text, f"{parser.prog}: {text}"
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                todo.extend(action.choices.values())
    assert seen > 20


@pytest.mark.parametrize(
    "args, message",
    [
        (["exec", "h0"], "no command given (write it after `--`); usage: commodel cluster exec"),
        (["exec", "h0", "h1", "--", "true"], "unexpected arguments 'h1'"),
        (["sandbox", "--spec", "x.yaml", "--bogus", "--", "true"], "unexpected arguments '--bogus'"),
        (["sandbox", "--spec", "x.yaml"], "no command given (write it after `--`)"),
        (["mpirun", "-np", "2"], "no command given (write it after `--`); usage: commodel cluster mpirun"),
    ],
)  # fmt: skip
def test_cluster_commands_with_a_command_check_their_arguments_first(cli, args, message):
    """exec, mpirun and sandbox split `[options] -- CMD` the same way; these fail before
    anything is built (no root needed)."""
    res = cli("cluster", *args)
    assert res.code == 2, res.err
    assert message in res.err and "Traceback" not in res.err


@pytest.mark.parametrize("what", ["exec", "mpirun", "sandbox"])
def test_cluster_command_help(cli, what):
    res = cli("cluster", what, "--help")
    assert res.code == 0 and f"commodel cluster {what}" in res.out
