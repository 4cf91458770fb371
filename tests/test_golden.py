"""Golden outputs of the `commodel` command: each file in tests/golden/ is one run, compared exactly.

A golden file starts with the command line (``$ commodel ...``, run in-process from the
repository root, with an 80-column terminal), then the exit code, stdout and stderr it must
produce; the repository's absolute path is written ``<repo>``. Inputs that are not examples
live in tests/golden/inputs/.

When an output changes on purpose (a better error message, a new column), regenerate the
files with one command and review the difference before committing it::

    COMMODEL_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_golden.py -q
    git diff tests/golden

A new case is a new file holding only its command line (``$ commodel ...``); the update
run fills in the rest.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

from conftest import ROOT, needs_engine

GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE = os.environ.get("COMMODEL_UPDATE_GOLDEN", "") not in ("", "0")
CASES = sorted(GOLDEN.glob("*.txt"))


def read_command(path: Path) -> str:
    """The command line of a golden file: its first line, without the ``$ ``."""
    first = path.read_text(encoding="utf-8").splitlines()[0]
    if not first.startswith("$ commodel "):
        raise ValueError(f"{path.name}:1: a golden file starts with '$ commodel ...'")
    return first[2:]


def render(command: str, code: int, out: str, err: str) -> str:
    """The text of a golden file for one run."""

    def section(name: str, text: str) -> str:
        if text and not text.endswith("\n"):
            text += "\n[no newline at end]\n"
        return f"--- {name}\n{text}"

    text = f"$ {command}\nexit {code}\n" + section("stdout", out) + section("stderr", err)
    return text.replace(str(ROOT), "<repo>")


def test_cases_exist() -> None:
    # predict (text, --json), schedule, schedule --list and at least a dozen error messages
    names = [p.stem for p in CASES]
    assert len([n for n in names if n.startswith("error-")]) >= 12, names
    for name in ("predict-text", "predict-json", "schedule", "schedule-list"):
        assert name in names


@needs_engine
@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_golden(path: Path, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    command = read_command(path)
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("COLUMNS", "80")  # argparse wraps its usage lines to the terminal
    result = cli(*shlex.split(command)[1:])
    actual = render(command, result.code, result.out, result.err)
    if UPDATE:
        if path.read_text(encoding="utf-8") != actual:
            path.write_text(actual, encoding="utf-8")
        return
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, (
        f"{path.name} differs from this run. If the change is intended, run "
        "COMMODEL_UPDATE_GOLDEN=1 pytest tests/test_golden.py and review `git diff tests/golden`."
    )
