"""Independent predictions on a thread pool (commodel.parallel): the same results, in the same
order, and the same first error, as one after the other. No timing is asserted."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import commodel
from commodel.advise.advice import advise
from commodel.cli.main import main
from commodel.errors import CommodelError
from commodel.parallel import map_ordered, usable_cores
from commodel.platform import load_platform
from commodel.report.model_comparison import compare_models

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
GOLDEN_GOAL = EXAMPLES / "schedules" / "loggops-example.goal"

# rank 1 waits for a message rank 0 never sends: every model reports the deadlock
DEADLOCK = """\
num_ranks 2
rank 0 {
a: calc 10
}
rank 1 {
b: recv 8b from 0 tag 1
}
"""


# ---------------------------------------------------------------- the helper


def test_map_ordered_keeps_input_order_and_values():
    items = list(range(40))
    assert map_ordered(lambda x: x * x, items, 4) == [x * x for x in items]
    assert map_ordered(lambda x: x, [], 4) == []
    assert map_ordered(lambda x: -x, iter([3, 1, 2]), 2) == [-3, -1, -2]
    assert usable_cores() >= 1


def test_jobs_1_runs_in_the_calling_thread():
    me = threading.get_ident()
    assert map_ordered(lambda _: threading.get_ident(), range(5), 1) == [me] * 5
    # with a pool, no item runs in the calling thread
    assert me not in map_ordered(lambda _: threading.get_ident(), range(5), 2)


def test_the_first_failing_item_in_input_order_is_raised():
    """Item 2 fails first in time (item 0 waits until it has), yet item 0's error surfaces."""
    item2_failed = threading.Event()

    def fn(i: int) -> int:
        if i == 0:
            assert item2_failed.wait(30)
            raise CommodelError("item 0 is bad")
        if i == 2:
            item2_failed.set()
            raise CommodelError("item 2 is bad")
        return i

    with pytest.raises(CommodelError, match="^item 0 is bad$"):
        map_ordered(fn, range(4), 3)


def test_with_a_cost_the_most_costly_start_first_and_results_keep_input_order():
    """Longest first: on one worker thread the start order is the cost order (ties in input
    order); the results, and the error raised, are those of input order."""
    started: list[int] = []
    lock = threading.Lock()

    def fn(x: int) -> int:
        with lock:
            started.append(x)
        return 10 * x

    costs = {0: 1.0, 1: 5.0, 2: 3.0, 3: 5.0, 4: 0.5}
    # two threads, one of them held until every item has been handed out: the other
    # takes them one by one in the order they were submitted
    gate = threading.Event()

    def held(x: int) -> int:
        if x == 1:  # the first submitted (cost 5, first of the tie)
            assert gate.wait(30)
        out = fn(x)
        if len(started) == 4:
            gate.set()
        return out

    assert map_ordered(held, range(5), 2, cost=costs.get) == [0, 10, 20, 30, 40]
    assert started == [3, 2, 0, 4, 1]  # 1 was taken first, but started after the gate

    def bad(x: int) -> int:
        if x in (0, 3):
            raise CommodelError(f"item {x} is bad")
        return x

    # 3 is handed out first (cost 5), yet item 0's error surfaces
    with pytest.raises(CommodelError, match="^item 0 is bad$"):
        map_ordered(bad, range(4), 2, cost=lambda x: 5.0 if x == 3 else 1.0)


@pytest.mark.parametrize("jobs", [0, -1, True, 1.5])
def test_jobs_must_be_a_whole_number_from_1(jobs):
    with pytest.raises(CommodelError, match="jobs: expected a whole number >= 1"):
        map_ordered(str, [1, 2], jobs)


# ---------------------------------------------------------------- predict --model all


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_model_all_parallel_equals_sequential(capsys):
    sched = commodel.collective("alltoall-pairwise", 16, 65536)
    plat = load_platform("nomura2007")
    one = compare_models(sched, plat, jobs=1)
    two = compare_models(sched, plat, jobs=2)
    assert [r.model for r in two] == [r.model for r in one]
    assert sum(r.prediction is not None for r in one) >= 4
    for a, b in zip(one, two):
        assert a.skipped == b.skipped
        assert (a.prediction and a.prediction.to_dict()) == (
            b.prediction and b.prediction.to_dict()
        )
    for extra in ((), ("--json",)):
        runs = [
            _cli(capsys, "predict", GOLDEN_GOAL, "-p", "nomura2007", "--model", "all", *extra, *j)
            for j in ((), ("--jobs", "1"), ("--jobs", "2"), ("-j", "3"))
        ]
        assert runs[0][0] == 0 and runs[0][1]
        assert runs[1:] == [runs[0]] * 3


def test_model_all_worker_error_is_the_sequential_one(tmp_path, capsys):
    bad = tmp_path / "deadlock.goal"
    bad.write_text(DEADLOCK)
    results = [
        _cli(capsys, "predict", bad, "-p", "nomura2007", "--model", "all", "--jobs", j)
        for j in ("1", "2", "4")
    ]
    code, out, err = results[0]
    assert code == 2 and out == ""
    assert err.startswith("commodel: error: ") and "Traceback" not in err
    assert results[1:] == [results[0]] * 2
    with pytest.raises(CommodelError) as one:
        compare_models(str(bad), load_platform("nomura2007"), jobs=1)
    with pytest.raises(CommodelError) as two:
        compare_models(str(bad), load_platform("nomura2007"), jobs=2)
    assert type(two.value) is type(one.value) and str(two.value) == str(one.value)
    # two different errors: the first model's, as in the loop
    plat = load_platform("nomura2007")
    for jobs in (1, 2):
        with pytest.raises(CommodelError, match="no-such-model-a") as exc:
            compare_models(str(bad), plat, models=["no-such-model-a", "no-such-model-b"], jobs=jobs)
        assert "no-such-model-b" not in str(exc.value)


def test_jobs_is_refused_without_model_all(capsys):
    code, out, err = _cli(capsys, "predict", GOLDEN_GOAL, "-p", "nomura2007", "--jobs", "2")
    assert code == 2
    assert "--jobs runs the models of --model all at once; add --model all" in err
    with pytest.raises(SystemExit) as exc:
        main(["predict", str(GOLDEN_GOAL), "-p", "nomura2007", "--model", "all", "--jobs", "0"])
    assert exc.value.code == 2
    assert "must be >= 1" in capsys.readouterr().err


# ---------------------------------------------------------------- advise


def test_advise_parallel_equals_sequential(capsys):
    args = ("nomura2007", "allreduce", [6, 8], [1, 4096, 65536])
    one = advise(*args, model="plogpt", jobs=1)
    two = advise(*args, model="plogpt", jobs=2)
    assert two == one
    # some generators refuse some (P, m): their notes come through the pool too
    notes = [c.note for p in one.points for c in p.candidates if c.generator and c.time_s is None]
    assert notes and all(notes)
    cmd = (
        "advise",
        "--platform",
        "nomura2007",
        "--collective",
        "bcast",
        "--ranks",
        "8",
        "--sizes",
        "1KiB..64KiB",
    )
    runs = [_cli(capsys, *cmd, *j) for j in ((), ("--jobs", "1"), ("--jobs", "2"))]
    assert runs[0][0] == 0 and "bcast on platform nomura2007" in runs[0][1]
    assert runs[1:] == [runs[0]] * 2


def test_advise_worker_error_is_the_sequential_one(tmp_path, capsys):
    plat = tmp_path / "hockney-only.yaml"
    plat.write_text(
        "commodel_platform: 1\nname: hk\nnodes: 4\nranks_per_node: 1\n"
        "hockney:\n  alpha: 1.0e-3\n  beta: 1.0e-6\n"
    )
    cmd = (
        "advise",
        "--platform",
        plat,
        "--collective",
        "bcast",
        "--ranks",
        "4",
        "--model",
        "plogp",
    )
    results = [_cli(capsys, *cmd, "--jobs", j) for j in ("1", "2")]
    code, out, err = results[0]
    assert code == 2 and err.startswith("commodel: error: ") and "plogp" in err
    assert results[1] == results[0]


# ---------------------------------------------------------------- validate


def test_validate_parallel_equals_sequential(tmp_path):
    pytest.importorskip("duckdb")
    from commodel.validate.runner import summary_text, validate, write_csvs
    from test_validate import SCHEDULE, _store_pattern

    db = str(tmp_path / "v.duckdb")
    schedules = []
    for k in range(3):
        path = tmp_path / f"two-{k}-64KiB.goal"
        path.write_text(SCHEDULE)
        spans = [(0.004 + k * 1e-4, 0.0025, 0.004), (0.0045, 0.0026, 0.0041)]
        _store_pattern(db, str(path), spans)
        schedules.append(str(path))
    models = ["hockney", "loggops", "plogp", "plogpt", "maxmin", "zhu"]
    one = validate(schedules, "nomura2007", models, db, jobs=1)
    two = validate(schedules, "nomura2007", models, db, jobs=2)
    assert [r.schedule for r in two.results] == schedules
    assert two.results == one.results
    assert all(o.error is None for r in one.results for o in r.outcomes.values())
    assert summary_text(two) == summary_text(one)
    files = [write_csvs(v, str(tmp_path / name)) for v, name in ((one, "a"), (two, "b"))]
    for a, b in zip(*files):
        assert Path(b).read_text() == Path(a).read_text()
    # a model the platform cannot run is recorded per schedule, the same way
    plat = tmp_path / "hk.yaml"
    plat.write_text(
        "commodel_platform: 1\nname: hk\nnodes: 2\nranks_per_node: 1\n"
        "hockney:\n  alpha: 1.0e-3\n  beta: 1.0e-6\n"
    )
    one = validate(schedules, str(plat), ["plogp", "hockney"], db, jobs=1)
    two = validate(schedules, str(plat), ["plogp", "hockney"], db, jobs=2)
    assert two.results == one.results
    assert [r.outcomes["plogp"].error for r in two.results] == [
        r.outcomes["plogp"].error for r in one.results
    ]
    assert "no `plogp` section" in two.results[0].outcomes["plogp"].error
