"""Bad platform input: clear errors naming file and field, bounded YAML, table warnings."""

from __future__ import annotations

import copy
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
import yaml

from commodel.errors import PlatformError, PlatformWarning
from commodel.platform import load_platform, platform_from_dict
from test_platform import BASE

# The largest time the engine holds: 2**64 - 1 picoseconds.
LIMIT = "1.8446744e+07 seconds"


def write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "x.yaml"
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False))
    return path


def error_of(path: Path) -> str:
    with pytest.raises(PlatformError) as info:
        load_platform(path)
    return str(info.value)


def with_field(section: str, key: str, value: Any) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    data[section][key] = value
    return data


# --- times beyond the engine's range, said in the user's units -------------------------


@pytest.mark.parametrize(
    ("key", "value", "shown", "unit"),
    [
        ("L", 1e300, "1e+300", "seconds"),
        ("L", 1e8, "100000000.0", "seconds"),
        ("L", "1e8s", "'1e8s'", "seconds"),
        ("G", 1e300, "1e+300", "seconds per byte"),
        ("O", "2e7s", "'2e7s'", "seconds per byte"),
    ],
)
def test_time_beyond_the_engine_names_file_field_and_value(
    tmp_path: Path, key: str, value: Any, shown: str, unit: str
) -> None:
    path = write(tmp_path, with_field("loggops", key, value))
    limit = LIMIT if unit == "seconds" else LIMIT.replace("seconds", "seconds per byte")
    assert error_of(path) == (
        f"{path}: loggops.{key}: must be at most {limit} (the engine counts time in "
        f"64-bit picoseconds), got {shown}"
    )


def test_time_at_the_engines_limit_is_accepted() -> None:
    platform = platform_from_dict(with_field("loggops", "L", 1.8e7))
    assert platform.engine_params("loggops")["L"] == 18_000_000_000_000_000_000


def test_plogp_table_beyond_the_engine_names_the_entry(tmp_path: Path) -> None:
    data = copy.deepcopy(BASE)
    data["plogp"]["g"][2] = 1e300
    path = write(tmp_path, data)
    assert error_of(path).startswith(f"{path}: plogp.g[2]: must be at most {LIMIT}")


# --- YAML that would exhaust the loader ----------------------------------------------


def test_deep_nesting_is_refused_with_the_line(tmp_path: Path) -> None:
    deep = "[" * 100 + "]" * 100
    path = write(tmp_path, f"commodel_platform: 1\nname: x\nnodes: 1\ndescription: {deep}\n")
    message = error_of(path)
    assert message == f"{path}:4:77: invalid YAML: nested deeper than 64 levels"


def test_very_deep_nesting_is_refused_by_the_parser(tmp_path: Path) -> None:
    """libyaml scans a flow collection ahead and stops at its own limit of 1000 levels."""
    deep = "[" * 20_000 + "]" * 20_000
    path = write(tmp_path, f"commodel_platform: 1\nname: x\nnodes: 1\ndescription: {deep}\n")
    message = error_of(path)
    assert message.startswith(f"{path}:4:")
    assert message.endswith(("nested deeper than 64 levels", "exceeded maximum nesting depth"))


def test_alias_bomb_is_refused_before_it_grows(tmp_path: Path) -> None:
    """Eleven anchors of ten aliases each: 10**11 strings once expanded."""
    levels = ["&a0 [lol, lol, lol, lol]"]
    for i in range(1, 12):
        levels.append(f"&a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    text = f"commodel_platform: 1\nname: x\nnodes: 1\ndescription: [{', '.join(levels)}]\n"
    path = write(tmp_path, text)
    message = error_of(path)
    assert message.startswith(f"{path}:4:")
    assert message.endswith(": invalid YAML: more than 1000000 values once aliases are expanded")


def test_few_aliases_load(tmp_path: Path) -> None:
    text = yaml.safe_dump(BASE, sort_keys=False).replace(
        "  S: null\n", "  S: null\n  bidirectional: {g: &g [1.0e-5, 2.0e-5, 7.0e-4]}\n"
    )
    assert load_platform(write(tmp_path, text)).plogp.bidirectional.g == (1e-5, 2e-5, 7e-4)


def test_bad_values_are_quoted_short() -> None:
    bomb: list[Any] = ["lol"] * 10
    for _ in range(30):
        bomb = [bomb] * 10  # 10**31 strings if printed whole
    for field, value in (("description", bomb), ("name", "x" * 10**6)):
        data = {**BASE, field: value} if field == "description" else {**BASE, "nodes": value}
        with pytest.raises(PlatformError) as info:
            platform_from_dict(data, "p.yaml")
        assert len(str(info.value)) < 200, str(info.value)[:300]


def test_long_unknown_key_is_quoted_short() -> None:
    with pytest.raises(PlatformError) as info:
        platform_from_dict({**BASE, "k" * 10**6: 1}, "p.yaml")
    assert str(info.value).startswith("p.yaml: 'kkkkkkkkkkkk")
    assert len(str(info.value)) < 300


def test_long_number_text_is_quoted_short(tmp_path: Path) -> None:
    path = write(tmp_path, with_field("loggops", "L", "1" * 10**6 + "us"))
    message = error_of(path)
    assert message.startswith(f"{path}: loggops.L: must be a time in seconds")
    assert len(message) < 300


# --- duplicate keys ------------------------------------------------------------------


def test_duplicate_top_level_key_names_both_lines(tmp_path: Path) -> None:
    path = write(tmp_path, "commodel_platform: 1\nnodes: 4\nname: x\nnodes: 8\n")
    assert error_of(path) == f"{path}:4:1: invalid YAML: duplicate key 'nodes' (first on line 2)"


def test_duplicate_nested_key_names_both_lines(tmp_path: Path) -> None:
    text = yaml.safe_dump(BASE, sort_keys=False).replace("  o: 1.5e-06\n", "  o: 1.5e-06\n  L: 1\n")
    lines = text.splitlines()
    first, second = lines.index("  L: 5.0e-06") + 1, lines.index("  L: 1") + 1
    assert error_of(write(tmp_path, text)).endswith(
        f":{second}:3: invalid YAML: duplicate key 'L' (first on line {first})"
    )


def test_merge_keys_may_be_overridden(tmp_path: Path) -> None:
    """A key given beside a merged mapping overrides it: not a duplicate."""
    text = "commodel_platform: 1\nname: m\nnodes: 2\n"
    text += "loggops:\n  <<: {L: 1.0e-6, o: 1.0e-6}\n  L: 2.0e-6\n  o: 3.0e-6\n"
    text += "  g: 0\n  G: 0\n  O: 0\n  S: null\n"
    assert load_platform(write(tmp_path, text)).loggops.L == 2e-6


# --- tables that decrease ------------------------------------------------------------


@pytest.mark.parametrize("table", ["g", "o_s", "o_r"])
def test_decreasing_table_warns_naming_the_sizes(tmp_path: Path, table: str) -> None:
    data = copy.deepcopy(BASE)
    data["plogp"][table] = [5e-6, 2e-5, 1e-5]
    path = write(tmp_path, data)
    with pytest.warns(PlatformWarning) as caught:
        load_platform(path)
    assert [str(w.message) for w in caught] == [
        f"{path}: plogp.{table}: {table}(65536 B) = 1e-05 s is less than "
        f"{table}(1024 B) = 2e-05 s; PLogP's {table}(m) should not decrease with m"
    ]


def test_decreasing_bidirectional_table_warns(tmp_path: Path) -> None:
    data = copy.deepcopy(BASE)
    data["plogp"]["bidirectional"] = {"g": [5e-6, 4e-6, 7e-4]}
    with pytest.warns(PlatformWarning, match=r"plogp\.bidirectional\.g: g\(1024 B\) = 4e-06 s"):
        platform_from_dict(data, "p.yaml")


def test_the_command_shows_the_warning(tmp_path: Path) -> None:
    data = copy.deepcopy(BASE)
    data["plogp"]["g"] = [5e-6, 2e-5, 1e-5]
    path = write(tmp_path, data)
    done = subprocess.run(
        [sys.executable, "-m", "commodel", "demo", "-p", str(path), "-P", "4", "-M", "plogp"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert f"commodel: warning: {path}: plogp.g: g(65536 B) = 1e-05 s is less than" in done.stderr
    assert "PlatformWarning" not in done.stderr and "warnings.warn" not in done.stderr


def test_the_command_shows_the_warning_once_in_process(tmp_path: Path, cli) -> None:
    """In-process too (whatever the interpreter's warning filters, here pytest's 'error'):
    one line, and the command goes on."""
    data = copy.deepcopy(BASE)
    data["plogp"]["g"] = [5e-6, 2e-5, 1e-5]
    path = write(tmp_path, data)
    res = cli("demo", "-p", str(path), "-P", "4", "-M", "plogp")
    assert res.code == 0, res.err
    assert res.err.count("commodel: warning:") == 1


def test_flat_table_does_not_warn() -> None:
    data = copy.deepcopy(BASE)
    data["plogp"]["g"] = [5e-6, 5e-6, 5e-6]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        platform_from_dict(data, "p.yaml")


# --- the Python API ------------------------------------------------------------------


@pytest.mark.parametrize(("value", "kind"), [({}, "dict"), (None, "NoneType"), (3, "int")])
def test_load_platform_names_its_argument(value: Any, kind: str) -> None:
    with pytest.raises(PlatformError) as info:
        load_platform(value)
    assert str(info.value) == (
        f"load_platform: path_or_name must be a platform file, the name of a built-in "
        f"platform or a Platform, got {kind} (platform_from_dict reads a dict)"
    )


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("x" * 5000, "'" + "x" * 37 + "..." + "x" * 38 + "': cannot read: File name too long"),
        ("a\x00b", "'a\\x00b': no such platform file"),
    ],
)
def test_unreadable_platform_name_is_quoted_short(name: str, shown: str) -> None:
    with pytest.raises(PlatformError) as info:
        load_platform(name)
    assert str(info.value).startswith(shown)
    assert len(str(info.value)) < 250


def test_integer_too_long_for_python_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, "commodel_platform: 1\nname: x\nnodes: " + "9" * 5000 + "\n")
    assert error_of(path) == f"{path}:3:8: invalid YAML: an integer of 5000 digits is too long"


def test_a_date_is_text(tmp_path: Path) -> None:
    """No platform field is a date: YAML's implicit timestamps are read as text."""
    path = write(tmp_path, "commodel_platform: 1\nname: x\nnodes: 1\ndescription: 2026-13-45\n")
    assert load_platform(path).description == "2026-13-45"
    path = write(tmp_path, {**BASE, "hockney": {"alpha": "2026-11-28", "beta": 1e-9}})
    assert error_of(path).startswith(f"{path}: hockney.alpha: must be a time in seconds")


@pytest.mark.parametrize(
    ("value", "tag"),
    [
        ("!!timestamp x", "'!!timestamp'"),
        ("!!timestamp 2026-11-28", "'!!timestamp'"),
        ("!!binary aGVsbG8=", "'!!binary'"),
        ("!!set {a, b}", "'!!set'"),
        ("!!omap [a: 1]", "'!!omap'"),
        ("!!pairs [a: 1]", "'!!pairs'"),
        ("!!python/object:os.system x", "'!!python/object:os.system'"),
        ("!local x", "'!local'"),
    ],
)
def test_tags_a_platform_needs_not_are_refused(tmp_path: Path, value: str, tag: str) -> None:
    path = write(tmp_path, f"commodel_platform: 1\nname: x\nnodes: 1\ndescription: {value}\n")
    assert error_of(path) == (
        f"{path}:4:14: invalid YAML: tag {tag} is not allowed (only text, numbers, "
        "true/false, null, lists and mappings)"
    )


@pytest.mark.parametrize(
    ("value", "shown", "tag"),
    [("!!bool ye", "'ye'", "!!bool"), ("!!int", "''", "!!int"), ("!!float x", "'x'", "!!float"),
     ("!!int 1.5", "'1.5'", "!!int"), ("!!null 0", "'0'", "!!null")],
)  # fmt: skip
def test_a_typed_tag_needs_text_of_its_type(
    tmp_path: Path, value: str, shown: str, tag: str
) -> None:
    """Found by fuzz/harness.py (cluster-yaml): PyYAML's constructors assume the text is of
    their type; `!!bool ye` ended in a KeyError inside PyYAML, an empty `!!int` in an
    IndexError."""
    path = write(tmp_path, f"commodel_platform: 1\nname: x\nnodes: {value}\n")
    assert (
        error_of(path) == f"{path}:3:8: invalid YAML: {shown} is not of the type of its tag {tag}"
    )


def test_plain_tags_are_allowed(tmp_path: Path) -> None:
    path = write(tmp_path, "commodel_platform: !!int 1\nname: !!str x\nnodes: ! 1\n")
    assert load_platform(path).nodes == 1
    path = write(
        tmp_path, "commodel_platform: 1\nname: x\nnodes: 1\nhockney: {alpha: !!float 1, beta: 0}\n"
    )
    assert load_platform(path).hockney.alpha == 1.0


def test_bytes_that_are_not_utf8_name_the_offset(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_bytes(b"commodel_platform: 1\nname: x\xff\nnodes: 1\n")
    assert error_of(path) == f"{path}:2: byte 28 (0xff) is not UTF-8; a platform file is UTF-8 text"


def test_control_characters_name_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, "commodel_platform: 1\nname: x\x01\nnodes: 1\n")
    assert error_of(path) == (
        f"{path}:2: invalid YAML: character U+0001 (at character 28) is not allowed: "
        "YAML forbids control characters"
    )


def test_a_file_too_large_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    path = write(tmp_path, "commodel_platform: 1\nname: x\nnodes: 1\n" + "#" * (2 << 20))
    assert error_of(path) == (
        f"{path}: larger than 2 MiB; a platform file is at most 2097152 bytes"
    )


def test_eps_s_that_is_not_a_number(tmp_path: Path) -> None:
    path = write(tmp_path, {**BASE, "tcp": {"eps_S": "1.0e"}})
    assert error_of(path) == f"{path}: tcp.eps_S: must be a number, got '1.0e'"


@pytest.mark.parametrize("section", ["network", "many_to_one"])
def test_null_key_in_an_open_section_is_unknown(tmp_path: Path, section: str) -> None:
    path = write(tmp_path, f"commodel_platform: 1\nname: x\nnodes: 2\n{section}: {{~: 1}}\n")
    assert error_of(path).startswith(f"{path}: {section}.None: unknown key")
