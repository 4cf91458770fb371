"""The docs show what the code does: shown outputs are run and compared, model lists are complete.

A *transcript* is a fenced block of README.md or docs/tutorial.md whose first line starts
with ``$ ``: each ``$ commodel ...`` line is run (in-process, in one scratch directory per
document, in the order shown, with ``examples/`` linked in) and what it prints, stdout then
stderr, must be the lines shown below it up to the next ``$``. A line holding only ``...``
stands for any number of lines (the shown part before and after it is still checked).
``$ make demo`` is run as the ``commodel demo`` its Makefile recipe runs. A ``python``
block is executed; if the next fenced block is marked ``output``, that is what it must print.

When a doc fails here, run the command it shows and paste the new output into the doc.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import ROOT, needs_engine

DOCS = ["README.md", "docs/tutorial.md"]
ELLIPSIS = "..."


@dataclass
class Block:
    info: str  # the fence's info string: "", "python", "output", ...
    line: int  # 1-based line of the opening fence
    lines: list[str]


@dataclass
class Step:
    line: int
    command: str  # without "$ "; empty for a python block
    code: str  # the python source of a python block
    expected: list[str] | None  # None: output not shown (python block without output)


def fenced_blocks(text: str) -> list[Block]:
    blocks: list[Block] = []
    current: Block | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("```"):
            if current is None:
                current = Block(line[3:].strip(), number, [])
            else:
                blocks.append(current)
                current = None
        elif current is not None:
            current.lines.append(line)
    assert current is None, f"unclosed code fence at line {current.line}"
    return blocks


def steps_of(doc: str) -> list[Step]:
    """The commands and code blocks of a document, with the output each must print."""
    blocks = fenced_blocks((ROOT / doc).read_text(encoding="utf-8"))
    steps: list[Step] = []
    for index, block in enumerate(blocks):
        if block.info == "python":
            following = blocks[index + 1] if index + 1 < len(blocks) else None
            shown = following.lines if following and following.info == "output" else None
            steps.append(Step(block.line, "", "\n".join(block.lines), shown))
        elif block.lines and block.lines[0].startswith("$ "):
            for offset, line in enumerate(block.lines):
                if line.startswith("$ "):
                    steps.append(Step(block.line + 1 + offset, line[2:], "", []))
                else:
                    steps[-1].expected.append(line)
    return steps


def matches(actual: list[str], expected: list[str]) -> bool:
    """Whether ``actual`` is ``expected`` with each ``...`` line standing for any lines."""
    pattern = "".join(
        r"(?:.*\n)*?" if line == ELLIPSIS else re.escape(line) + r"\n" for line in expected
    )
    return re.fullmatch(pattern, "".join(line + "\n" for line in actual)) is not None


def output_lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines()]


def makefile_demo_command() -> str:
    """The command that `make demo` runs once set up, read from the Makefile."""
    recipe = re.search(r"^demo:.*\n\t@?\$\(PY\) -m (commodel .*)$", _makefile(), re.M)
    assert recipe, "the Makefile's demo target no longer runs '$(PY) -m commodel ...'"
    return recipe.group(1)


def _makefile() -> str:
    return (ROOT / "Makefile").read_text(encoding="utf-8")


def write_tutorial_files(directory: Path) -> None:
    """The tutorial's my-cluster.yaml: nomura2007 with a negative g(m) value, as it says."""
    text = (ROOT / "examples" / "platforms" / "nomura2007.yaml").read_text(encoding="utf-8")
    plogp = text.index("\nplogp:")
    g_line = re.compile(r"^(  g: \[[^,]+, [^,]+, )([^,]+)", re.M)
    match = g_line.search(text, plogp)
    assert match, "nomura2007.yaml: plogp.g is no longer written on one line"
    text = text[: match.start(2)] + "-1.0" + text[match.end(2) :]
    (directory / "my-cluster.yaml").write_text(text, encoding="utf-8")


SETUP = {"docs/tutorial.md": write_tutorial_files}


def run_step(step: Step, cli) -> tuple[int, str]:
    """Run one command or python block; return its exit code and everything it printed."""
    if step.code:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(step.code, f"<python block at line {step.line}>", "exec"), {})
        return 0, out.getvalue()
    command = step.command
    if command == "make demo":
        command = makefile_demo_command()
    words = shlex.split(command, comments=True)
    assert words[0] == "commodel", f"line {step.line}: only commodel commands are run: {command}"
    result = cli(*words[1:])
    return result.code, result.out + result.err


@pytest.mark.parametrize("doc", DOCS)
def test_doc_shows_outputs(doc: str) -> None:
    assert any(step.expected for step in steps_of(doc)), f"{doc} shows no checked output"


@needs_engine
@pytest.mark.parametrize("doc", DOCS)
def test_shown_outputs_are_what_the_commands_print(
    doc: str, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    if doc in SETUP:
        SETUP[doc](tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")  # argparse wraps its usage lines to the terminal
    for step in steps_of(doc):
        code, printed = run_step(step, cli)
        where = f"{doc}:{step.line}: {step.command or 'python block'}"
        expected_code = (
            2 if any(line.startswith("commodel: error:") for line in step.expected or []) else 0
        )
        assert code == expected_code, f"{where}: exit {code}\n{printed}"
        if step.expected is not None:
            actual = output_lines(printed)
            assert matches(actual, step.expected), (
                f"{where}: prints\n"
                + "\n".join(actual)
                + "\nbut the doc shows\n"
                + "\n".join(step.expected)
            )


def test_ellipsis_matching() -> None:
    assert matches(["a", "b", "c"], ["a", ELLIPSIS, "c"])
    assert matches(["a", "c"], ["a", ELLIPSIS, "c"])
    assert not matches(["a", "b", "d"], ["a", ELLIPSIS, "c"])
    assert not matches(["a", "b"], ["a"])
    assert not matches(["a.c"], ["abc"])


# --- model lists: every registered model is named wherever models are listed ---------------


def registered_models() -> list[str]:
    from commodel.platform import model_names

    names = model_names()
    assert len(names) >= 8, names
    return names


def models_table(text: str) -> list[str]:
    """The model names of the first table of docs/models.md (its first column)."""
    start = text.index("| model |")
    rows = text[start:].split("\n\n", 1)[0].splitlines()[2:]
    return [re.fullmatch(r"\| `([^`]+)` \|.*", row).group(1) for row in rows]


def test_models_md_table_lists_the_registry() -> None:
    text = (ROOT / "docs" / "models.md").read_text(encoding="utf-8")
    assert sorted(models_table(text)) == registered_models()


@pytest.mark.parametrize("doc", ["README.md", "docs/tutorial.md"])
def test_docs_name_every_model(doc: str) -> None:
    text = (ROOT / doc).read_text(encoding="utf-8")
    missing = [name for name in registered_models() if f"`{name}`" not in text]
    assert not missing, f"{doc} does not name the models {missing}"


def test_predict_docstring_names_every_model() -> None:
    import commodel

    doc = commodel.predict.__doc__ or ""
    missing = [name for name in registered_models() if f"``{name}``" not in doc]
    assert not missing, f"commodel.predict's docstring does not name {missing}"


def test_help_lists_every_model(cli) -> None:
    from commodel.platform import model_spec

    top = cli("--help")
    predict = cli("predict", "--help")
    assert top.code == 0 and predict.code == 0
    after = top.out.split("models:\n", 1)[1].splitlines()
    listed = " ".join(line for line in itertools.takewhile(lambda s: s.startswith(" " * 13), after))
    assert sorted(listed.replace(",", " ").split()) == registered_models()
    for name in registered_models():
        # the line of the model in `predict --help`: its name, summary and sections
        spec = model_spec(name)
        line = re.search(rf"^  {re.escape(name)} +(.*)$", predict.out, re.M)
        assert line, f"commodel predict --help does not list {name}"
        assert line.group(1).split()[0] == spec.summary.split()[0]


# --- docs/architecture.md: the map of the tree names what exists, and all of it ------------

PACKAGE_ROOTS = [
    "python/commodel",
    "crates/commodel-engine/src",
    "crates/commodel-py/src",
    "crates/commodel-serialize/src",
]


def architecture_paths() -> list[str]:
    """The paths of the tree block of docs/architecture.md (the block under "## The tree").

    Each line starts with a path relative to the closest less-indented directory line above
    it (two spaces per level); the rest of the line describes it. A line indented deeper
    than one level below the line above continues that line's description.
    """
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("\n## The tree", 1)[1]
    block = next(b for b in fenced_blocks(section) if b.lines)
    stack: list[str] = []
    paths = []
    for line in block.lines:
        if not line.strip():
            continue
        depth = (len(line) - len(line.lstrip(" "))) // 2
        if depth > len(stack):
            continue  # a description continued
        name = line.split()[0]
        stack[depth:] = [name]
        paths.append("".join(stack))
    return paths


def test_architecture_names_only_what_exists() -> None:
    missing = [path for path in architecture_paths() if not (ROOT / path).exists()]
    assert not missing, f"docs/architecture.md names paths that do not exist: {missing}"


def test_architecture_names_every_module() -> None:
    listed = {path.rstrip("/") for path in architecture_paths()}
    unlisted = []
    for root in PACKAGE_ROOTS:
        for entry in sorted((ROOT / root).iterdir()):
            if entry.name.startswith(("_", ".")) or entry.suffix in (".so", ".pyd", ".typed"):
                continue  # __init__, __main__, _engine.pyi, the built extension, py.typed
            if f"{root}/{entry.name}" not in listed:
                unlisted.append(f"{root}/{entry.name}")
    assert not unlisted, f"docs/architecture.md does not mention {unlisted}"


def test_architecture_prose_names_only_what_exists() -> None:
    """Paths quoted in the text (`platform/loading.py`, `predict.rs::run`) exist somewhere."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    quoted = re.findall(r"`([\w./*-]+(?:\.py|\.rs|\.yaml|\.md|\.txt|/))(?:::\w+)?`", text)
    assert len(quoted) > 20, quoted
    bases = [ROOT, *(ROOT / root for root in PACKAGE_ROOTS), ROOT / "crates/commodel-engine"]
    missing = [q for q in quoted if not any(list(base.glob(q)) for base in bases)]
    assert not missing, f"docs/architecture.md names paths that do not exist: {missing}"


# --- docs/architecture.md: how to add a measurement, a model, a collective ---------------

HOWTO = "\n## How to add a measurement, a model, a collective\n"


def howto_item(kind: str) -> str:
    """The item ``kind`` ("a measurement", "a model", "a collective") of docs/architecture.md's
    "How to add ..." section."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split(HOWTO, 1)[1].split("\n## ", 1)[0]
    return section.split(f"* **{kind}**:", 1)[1].split("\n* **", 1)[0]


def measurement_howto() -> str:
    return howto_item("a measurement")


def touched_files(kind: str) -> list[str]:
    """The files the item says an addition touches: the paths quoted in its first sentence
    ("touches `a`, `b` ... ."), from the repository's root, ``<name>`` standing for any name."""
    sentence = howto_item(kind).split("touches ", 1)[1].split(".\n", 1)[0]
    paths = [q for q in re.findall(r"`([^`]+)`", sentence) if "/" in q or q.endswith(".md")]
    assert len(paths) >= 5, (kind, paths)
    return paths


def touched_pattern(path: str) -> re.Pattern[str]:
    """``path`` as a pattern, each ``<name>`` in it standing for one part of a path."""
    parts = re.split(r"(<[^>]+>)", path)
    return re.compile("".join(r"[^/]+" if p.startswith("<") else re.escape(p) for p in parts))


# what the tree holds that names things: code, docs, tests and their golden files
NAMING_FILES = ("python/commodel", "crates", "docs", "tests", "benches", "fuzz", "examples")
NAMING_SUFFIXES = {".py", ".pyi", ".rs", ".md", ".txt", ".json", ".yaml", ".toml"}


def tree_files() -> list[Path]:
    paths = [ROOT / "README.md", ROOT / "CONTRIBUTING.md"]
    for top in NAMING_FILES:
        paths += [
            p
            for p in (ROOT / top).rglob("*")
            if p.suffix in NAMING_SUFFIXES
            and not {"target", "__pycache__", ".pytest_cache"} & set(p.parts)
        ]
    return paths


def files_naming_all(names: list[str], paths: list[Path], root: Path = ROOT) -> set[str]:
    """The files of ``paths`` (as paths from ``root``) that name every one of ``names`` as a
    word of its own (``plogp`` is not named by ``plogpt`` nor by ``plogp_fit``)."""
    words = [re.compile(rf"(?<![\w-]){re.escape(n)}(?![\w-])") for n in names]
    out = set()
    for path in paths:
        text = path.read_text(encoding="utf-8", errors="replace")
        if all(w.search(text) for w in words):
            out.add(path.relative_to(root).as_posix())
    return out


def _names_of(kind: str) -> list[str]:
    if kind == "a measurement":
        from commodel.measure.registry import UNITS

        return [u.name for u in UNITS]
    if kind == "a model":
        return registered_models()
    from commodel.schedules import collective_names

    return [name for name, _summary in collective_names()]


@pytest.mark.parametrize("kind", ["a measurement", "a model", "a collective"])
def test_howto_names_files_that_exist(kind: str) -> None:
    """A file named plainly exists; one with ``<name>`` in it is a pattern that some file of
    the tree follows (``measure/<name>.py``: ``measure/plogp.py``, ...)."""
    for path in touched_files(kind):
        if "<" not in path:
            assert (ROOT / path).is_file(), f"{kind}: docs/architecture.md names {path}"
            continue
        pattern = touched_pattern(path)
        top = ROOT / path.split("<", 1)[0].rsplit("/", 1)[0]
        found = [p for p in top.rglob("*") if pattern.fullmatch(p.relative_to(ROOT).as_posix())]
        assert found, f"{kind}: no file of the tree is {path}"


@needs_engine
@pytest.mark.parametrize("kind", ["a measurement", "a model", "a collective"])
def test_every_file_that_names_them_all_is_in_the_howto(kind: str) -> None:
    """Adding one means adding it to every file that names all the others: each such file is
    in the item's list of files it touches, by its own path (``collectives/<operation>.rs``
    is the new one's generator, not the catalog ``collectives/mod.rs``)."""
    names = _names_of(kind)
    assert len(names) >= 9, names
    listed = set(touched_files(kind))
    found = files_naming_all(names, tree_files())
    assert found, f"no file names every {kind[2:]}"
    unlisted = sorted(found - listed)
    assert not unlisted, (
        f"these files name every {kind[2:]}, so adding {kind} touches them; "
        f"docs/architecture.md's item does not list them: {unlisted}"
    )


def test_files_naming_all_reads_whole_words(tmp_path: Path) -> None:
    texts = {
        "all.md": "`plogp` and maxmin-plain, then plogp again",
        "longer.md": "plogpt and maxmin-plain-x",
        "parts.rs": '"plogp_fit" => maxmin-plain; "maxmin-plai"',
        "one.txt": "plogp: only the one",
    }
    for name, text in texts.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    paths = sorted(tmp_path.iterdir())
    assert files_naming_all(["plogp", "maxmin-plain"], paths, tmp_path) == {"all.md"}
    assert files_naming_all(["maxmin-plai"], paths, tmp_path) == {"parts.rs"}
    assert files_naming_all(["plogp"], paths, tmp_path) == {"all.md", "one.txt"}


def test_the_registry_holds_one_line_of_the_documented_shape_per_measurement() -> None:
    from commodel.measure.registry import UNITS

    shape = 'Unit(<name>.MEASUREMENT, fit="<name>")'
    assert shape in measurement_howto()
    registry = (ROOT / "python/commodel/measure/registry.py").read_text(encoding="utf-8")
    lines = re.findall(r"^    (Unit\(.*\)),$", registry, re.M)
    assert len(lines) == len(UNITS) >= 10
    line = re.compile(r'Unit\((\w+)\.[A-Z_]+(?:, fit="(\w+)")?\)')
    assert all(line.fullmatch(text) for text in lines), lines
    documented = re.escape(shape).replace("<name>", r"(\w+)")
    same = [text for text in lines if re.fullmatch(documented, text)]
    assert len(same) >= len(UNITS) // 2, same  # the usual line: module and fit of one name
    assert all(a == b for a, b in (re.fullmatch(documented, t).groups() for t in same))


def test_a_model_is_where_the_howto_says() -> None:
    """The engine's MODELS, the ModelParams variants and their branches in predict.rs and the
    bindings, the converters registered in engine_params.py, the Networks in nic.rs and
    contention/."""
    src = ROOT / "crates/commodel-engine/src"
    params = (src / "params.rs").read_text(encoding="utf-8")
    listed = params.split("pub const MODELS: &[&str] = &[", 1)[1].split("];", 1)[0]
    assert sorted(re.findall(r'"([\w-]+)"', listed)) == registered_models()
    enum = params.split("pub enum ModelParams {", 1)[1].split("}", 1)[0]
    variants = re.findall(r"^\s*(\w+)\(\w+\),$", enum, re.M)
    assert len(variants) >= 7, variants
    for path in (src / "predict.rs", ROOT / "crates/commodel-py/src/params.rs"):
        text = path.read_text(encoding="utf-8")
        missing = [v for v in variants if f"ModelParams::{v}(" not in text]
        assert not missing, f"{path.relative_to(ROOT)} has no branch for {missing}"
    converters = (ROOT / "python/commodel/platform/engine_params.py").read_text(encoding="utf-8")
    registered = re.findall(r'@register_model\(\s*"([\w-]+)"', converters)
    assert sorted(registered) == registered_models()
    networks = {
        path.relative_to(src).as_posix()
        for path in src.rglob("*.rs")
        if re.search(r"^impl\b.*\bNetwork for ", path.read_text(encoding="utf-8"), re.M)
    }
    assert "nic.rs" in networks and len(networks) >= 4, networks
    assert all(n == "nic.rs" or n.startswith("contention/") for n in networks), networks


@needs_engine
def test_a_collective_is_one_row_of_the_catalog_naming_its_generator() -> None:
    from commodel.schedules import collective_names

    folder = ROOT / "crates/commodel-engine/src/collectives"
    catalog = (folder / "mod.rs").read_text(encoding="utf-8")
    table = catalog.split("static CATALOG: &[CollectiveInfo] = &[", 1)[1].split("\n];", 1)[0]
    rows = re.findall(r'^    entry\("([\w-]+)", "(?:[^"\\]|\\.)*", (\w+)::(\w+)\),$', table, re.M)
    assert len(rows) == len(table.strip().splitlines()), "one row a line, each of that shape"
    assert [name for name, _, _ in rows] == [name for name, _ in collective_names()]
    for name, module, function in rows:
        path = folder / f"{module}.rs"
        assert path.is_file(), (name, path)
        text = path.read_text(encoding="utf-8")
        assert re.search(rf"\bfn {function}\b", text), f"{name}: no fn {function} in {path}"


def _cli_value(kind: str, choices: tuple[str, ...] | None) -> list[str]:
    """A value of each option kind that the command line reads (the flag's words after it)."""
    if choices:
        return [choices[-1]]
    return {
        "int": ["3"],
        "float": ["0.5"],
        "size": ["2KiB"],
        "sizes": ["1KiB,4KiB"],
        "counts": ["3,4"],
        "names": ["eth0,eth1"],
        "text": ["bcast"],
        "flag": [],
    }[kind]


def test_architecture_names_the_files_a_measurement_touches() -> None:
    howto = measurement_howto()
    for path in ("measure/<name>.py", "fit/<name>.py", "measure/registry.py", "measure/unit.py",
                 "cli/measure.py", "fit/assemble.py", "measure/calibrate.py"):  # fmt: skip
        assert f"`{path}" in howto, path
    assert 'Unit(<name>.MEASUREMENT, fit="<name>")' in howto


def test_each_measurement_is_its_unit_and_one_line_of_the_registry() -> None:
    """What the how-to says holds for every registered measurement: the run in
    measure/<module>.py, the fit in fit/<fit>.py with the documented functions only, one
    `Unit(` line each in registry.py, no imports between a unit's run and its fit."""
    import dataclasses

    from commodel.measure.registry import UNITS
    from commodel.measure.unit import Measurement
    from test_import_cycles import import_graph

    package = ROOT / "python" / "commodel"
    graph = import_graph()
    registry = (package / "measure" / "registry.py").read_text(encoding="utf-8")
    table = registry.split("UNITS: tuple[Unit, ...] = (", 1)[1].split("\n)", 1)[0]
    assert len([line for line in table.splitlines() if line.strip().startswith("Unit(")]) == len(
        UNITS
    ), "one line per measurement in UNITS"
    assert len({u.name for u in UNITS}) == len(UNITS)
    hooks = {"sections", "complete", "through_model", "summary"}
    for unit in UNITS:
        m = unit.measurement
        assert isinstance(m, Measurement) and dataclasses.is_dataclass(m.options), unit.name
        run = m.options.__module__
        assert run.startswith("commodel.measure."), (unit.name, run)
        assert (package / "measure" / f"{run.rsplit('.', 1)[1]}.py").is_file(), run
        for field in dataclasses.fields(m.options):  # every field made by option()
            has_default = field.default is not dataclasses.MISSING
            assert has_default or field.default_factory is not dataclasses.MISSING, field.name
        if unit.fit is None:
            assert m.summary is not None or not m.command, f"{unit.name}: nothing to print"
            continue
        fit = f"commodel.fit.{unit.fit}"
        assert (package / "fit" / f"{unit.fit}.py").is_file(), fit
        module = unit.fit_module()
        defined = {h for h in hooks if callable(getattr(module, h, None))}
        assert defined & {"sections", "complete", "through_model"}, f"{fit} fits nothing"
        assert "summary" in defined or not m.command, f"{fit}: no summary for measure"
        assert fit not in graph[run], f"{run} imports {fit}"
        assert run not in graph[fit], f"{fit} imports {run}"


def test_the_command_and_fit_name_no_measurement_and_every_flag_reaches_its_option() -> None:
    """cli/measure.py and fit/assemble.py name no measurement (collective-sweep, a driver of
    measure collective, aside; the platform file's sections plogp, tcp, lmo are named as
    sections): what a measurement is comes from the registry; and every flag a
    measurement's options declare reaches its field on the command line."""
    import argparse
    import ast

    from commodel.cli import measure as cli_measure
    from commodel.measure.registry import UNITS
    from commodel.measure.unit import cli_options
    from commodel.platform.sections import SECTIONS

    names = {u.name for u in UNITS}
    for path, allowed in (("cli/measure.py", {"collective"}), ("fit/assemble.py", set(SECTIONS))):
        tree = ast.parse((ROOT / "python" / "commodel" / path).read_text(encoding="utf-8"))
        keys = {id(n.slice) for n in ast.walk(tree) if isinstance(n, ast.Subscript)}
        strings = {  # a key of a section (network["topology"]) is no measurement's name
            n.value
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in keys
        }
        assert not (strings & names) - allowed, f"{path} names {sorted(strings & names)}"

    parser = argparse.ArgumentParser()
    cli_measure.register(parser.add_subparsers())
    commands = [u for u in UNITS if u.measurement.command]
    assert [u.name for u in commands][:3] == ["plogp", "tree", "lmo"]
    for unit in commands:
        options = unit.measurement.options
        base = ["measure", unit.name, "--db", "x.duckdb"]
        base += [f.metavar or "s.goal" for _, f in cli_options(options) if f.positional]
        if unit.name == "collective":
            base += ["--collective", "bcast"]
        for field, flag in cli_options(options):
            if flag.positional or field == "collective":
                continue
            words = [flag.flag or "--" + field.replace("_", "-")]
            words += _cli_value(flag.kind, flag.choices)
            given = cli_measure.given(parser.parse_args(base + words), options)
            assert given[field] is not None, (unit.name, words)
            others = {k for k, v in given.items() if v is not None and k != field}
            assert others <= {"collective", "schedule"}, (unit.name, words, others)
