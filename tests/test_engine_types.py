"""The engine's Python types: _engine.pyi against the compiled module (signatures, not only
names), the public API under mypy --strict, and what `simulate` returns against its TypedDict."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

import commodel
from conftest import EXAMPLES, ROOT, needs_engine

STUB = ROOT / "python" / "commodel" / "_engine.pyi"


def _mypy(*args: str) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("mypy", reason="mypy is in the dev extra: pip install -e '.[dev]'")
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


@needs_engine
def test_stubtest_compares_the_stub_with_the_compiled_module() -> None:
    """Parameter names, defaults, kinds and exported names of every function and class."""
    proc = _mypy("mypy.stubtest", "commodel._engine")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_public_api_passes_mypy_strict() -> None:
    """[tool.mypy] in pyproject.toml lists the public modules and the stub; strict mode."""
    proc = _mypy("mypy")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no issues found in 5 source files" in proc.stdout


def _typed_dict_fields(name: str) -> dict[str, str]:
    tree = ast.parse(STUB.read_text())
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name]
    return {
        node.target.id: ast.unparse(node.annotation)
        for node in cls.body
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
    }


@needs_engine
def test_simulate_returns_what_the_typed_dict_says() -> None:
    from commodel import _engine

    platform = commodel.load_platform(EXAMPLES / "platforms" / "plogpt-example.yaml")
    schedule = commodel.read_goal(EXAMPLES / "schedules" / "plogpt-example.goal")
    result = _engine.simulate(schedule, "plogpt", platform.engine_params("plogpt"))
    fields = _typed_dict_fields("SimulateResult")
    assert set(result) == set(fields)
    assert fields == {
        "model": "str",
        "makespan_ps": "int",
        "finish_ps": "list[int]",
        "events": "int",
        "slowest_rank": "int",
        "messages": "MessageColumns",
        "rto_events": "list[RtoEventResult]",
    }
    assert result["model"] == "plogpt"
    assert result["makespan_ps"] == 26 * 10**12
    assert all(type(ps) is int for ps in result["finish_ps"])
    columns = result["messages"]
    assert isinstance(columns, _engine.MessageColumns)
    assert len(columns) == schedule.num_ops // 2
    for name in columns.fields:
        assert len(columns.column(name)) == 8 * len(columns)  # 8-byte integers
    assert set(_typed_dict_fields("RtoEventResult")) == {
        "src",
        "dst",
        "bytes",
        "tag",
        "at_ps",
        "delay_ps",
    }
