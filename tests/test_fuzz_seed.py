"""CI's share of the fuzzing (docs/fuzzing.md): the first inputs of every target of
fuzz/harness.py, in-process. Each must run or end in a CommodelError (the CLI: exit 0 or
2); anything else is a finding, reported with its seed (`python fuzz/harness.py check
TARGET SEED` replays it)."""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path

import pytest

from commodel.errors import CommodelError
from conftest import needs_engine

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fuzz"))
import targets  # noqa: E402

pytestmark = needs_engine

# inputs per target: the cheap ones more (about 2 ms each), the databases fewer (0.1 s a
# file, 30 ms in memory)
SEEDS = {name: 60 for name in targets.TARGETS} | {"results-db": 8, "results-db-memory": 30}


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


def test_an_in_memory_database_fits_as_its_file_does(tmp_path: Path) -> None:
    """results-db-memory stands for results-db at a fifth of the cost only if the same plan
    gives the same answer: the same platform fitted, or the same error."""
    import random

    import duckdb
    import other_inputs

    from commodel.db import ResultsDB
    from commodel.fit.assemble import fit_platform

    con = duckdb.connect(":memory:")
    outcomes = set()
    for seed in [*range(10), 17, 34, 43]:  # 17, 34 and 43 fit; most plans are refused
        plan = other_inputs.results_db(random.Random(f"results-db/{seed}"))
        path = tmp_path / "db.duckdb"
        targets.build_db(path, plan)
        con.execute("ATTACH ':memory:' AS fz")
        con.execute("USE fz")
        answers = []
        for opened in (None, con):
            try:
                if opened is None:
                    doc = fit_platform(str(path))[0]
                else:
                    if plan["schema"] != "empty-file":
                        with ResultsDB("DB", con=con) as db:
                            targets.fill_db(db, plan)
                        targets.break_db(con, plan["schema"])
                    with ResultsDB("DB", read_only=True, con=con) as db:
                        doc = fit_platform("DB", opened=db)[0]
                doc.pop("description")  # names the file
                answers.append(doc)
            except CommodelError as exc:
                answers.append(str(exc).replace(str(path), "DB"))
        con.execute("USE memory")
        con.execute("DETACH fz")
        assert answers[0] == answers[1], f"seed {seed}"
        outcomes.add(type(answers[0]).__name__)
    assert outcomes == {"dict", "str"}  # plans that fit and plans that are refused


def test_a_harness_run_leaves_no_scratch_folder(tmp_path: Path, monkeypatch) -> None:
    """The workers write their files in one folder per run, removed at its end, also where a
    worker was killed (it cleans nothing up itself); the base is a temporary folder here."""
    import harness

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(targets, "SCRATCH_DIR", str(scratch))
    figures = harness.run("results-db", 2, None, 0, 2, 5.0, 4.0, tmp_path / "findings.jsonl")
    assert figures.inputs == 2
    assert list(scratch.iterdir()) == []  # no commodel-fuzz-* left
    assert targets.WORK_ENV not in os.environ
