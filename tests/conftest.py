"""Shared fixtures: paths of the repository, the CLI run in-process, engine availability."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

try:  # running from a source tree that was never installed: use python/
    import commodel  # noqa: F401
except ImportError:  # pragma: no cover
    sys.path.insert(0, str(ROOT / "python"))


def _engine_available() -> bool:
    try:
        from commodel import _engine
    except ImportError:
        return False
    return hasattr(_engine, "simulate")


ENGINE = _engine_available()

# Outside CI a missing engine build skips the engine-backed tests; in CI it fails them.
needs_engine = pytest.mark.skipif(
    not ENGINE and not os.environ.get("CI"),
    reason="the engine bindings (commodel._engine) are not built: run `make install`",
)


@dataclass
class CliResult:
    code: int
    out: str
    err: str


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]):
    """Run ``commodel ARGS...`` in this process; return exit code, stdout and stderr."""
    from commodel.cli.main import main

    def run(*args: str) -> CliResult:
        capsys.readouterr()
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:  # argparse: --help, --version, usage errors
            code = exc.code if isinstance(exc.code, int) else 1
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run
