"""CI's share of the fuzzing (docs/fuzzing.md): the first inputs of every target of
fuzz/harness.py, in-process. Each must run or end in a CommodelError (the CLI: exit 0 or
2); anything else is a finding, reported with its seed (`python fuzz/harness.py check
TARGET SEED` replays it)."""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

import pytest

from commodel.errors import CommodelError
from conftest import needs_engine

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fuzz"))
import targets  # noqa: E402

pytestmark = needs_engine

# inputs per target: the cheap ones more (about 2 ms each), the databases fewer (0.1 s)
SEEDS = {name: 60 for name in targets.TARGETS} | {"results-db": 8}


@pytest.mark.parametrize("target", list(targets.TARGETS))
def test_the_first_inputs_run_or_fail_cleanly(target: str) -> None:
    findings = []
    ran = 0
    for seed in range(SEEDS[target]):
        try:
            targets.check(target, targets.generate(target, seed))
            ran += 1
        except CommodelError:
            pass
        except Exception as exc:  # noqa: BLE001 - the finding
            where = traceback.extract_tb(exc.__traceback__)[-1]
            findings.append(
                f"seed {seed}: {type(exc).__name__}: {exc} at {where.filename}:{where.lineno}"
            )
    assert findings == []
    assert ran > 0  # the grammar makes inputs that load, not only ones that are refused


def test_an_input_is_its_seed() -> None:
    for target in targets.TARGETS:
        assert targets.generate(target, 7) == targets.generate(target, 7)
        assert any(targets.generate(target, 7) != targets.generate(target, k) for k in range(8, 12))
