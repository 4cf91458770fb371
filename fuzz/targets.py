"""The fuzz targets: what is generated for each kind of file a user hands commodel, and what
is then asked of it. An input may load and run, or fail with a
:class:`~commodel.errors.CommodelError` (the CLI: exit 2, no traceback); any other exception
is a finding. What loads must drive every model it has sections for; what parses must
predict under every model.

Each target is ``(generate(rng) -> input, check(input))``; :mod:`harness` runs them with
the time and memory limits.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import os
import random
import shutil
import tempfile
import warnings
import zlib
from pathlib import Path
from typing import Any, Callable

import other_inputs
import yaml_inputs

from commodel import parse_goal, predict, read_goal
from commodel.errors import CommodelError

# Scratch files: under a harness run, this worker's subfolder of the run's folder (the
# harness removes it, also after a killed worker); imported on its own (the tests), a
# folder of its own removed at exit. tmpfs where there is one: DuckDB syncs its file on
# every checkpoint.
SCRATCH_DIR = "/dev/shm" if os.path.isdir("/dev/shm") else None
WORK_ENV = "COMMODEL_FUZZ_WORK"  # the run's folder, set by the harness
if os.environ.get(WORK_ENV):
    WORK = Path(os.environ[WORK_ENV]) / f"worker-{os.getpid()}"
    WORK.mkdir(parents=True, exist_ok=True)
else:
    WORK = Path(tempfile.mkdtemp(prefix="commodel-fuzz-", dir=SCRATCH_DIR))
    atexit.register(shutil.rmtree, WORK, ignore_errors=True)

# Schedules every loaded platform is asked to predict: a pair, a 3-to-1 gather (the incast
# rule's case), an exchange with a calc, and 16 ranks (more ranks than most platforms have
# nodes: placement errors must be clean).
SCHEDULES_TEXT = [
    "num_ranks 2\nrank 0 {\na: send 1000b to 1\n}\nrank 1 {\nb: recv 1000b from 0\n}\n",
    "num_ranks 4\nrank 0 {\na: recv 20000b from 1\nb: recv 20000b from 2\nc: recv 20000b from 3\n}\n"
    "rank 1 {\nd: send 20000b to 0\n}\nrank 2 {\ne: send 20000b to 0\n}\n"
    "rank 3 {\nf: send 20000b to 0\n}\n",
    "num_ranks 3\nrank 0 {\na: send 70000b to 1\nb: recv 10b from 2\nc: calc 1000\nc requires b\n}\n"
    "rank 1 {\nd: recv 70000b from 0\ne: send 70000b to 2\ne requires d\n}\n"
    "rank 2 {\nf: recv 70000b from 1\ng: send 10b to 0\n}\n",
]
_SCHEDULES: list[Any] = []


def schedules() -> list[Any]:
    if not _SCHEDULES:
        from commodel import collective

        _SCHEDULES.extend(parse_goal(t, "fuzz.goal") for t in SCHEDULES_TEXT)
        _SCHEDULES.append(collective("alltoall-pairwise", 16, 4096))
    return _SCHEDULES


def quiet() -> contextlib.ExitStack:
    stack = contextlib.ExitStack()
    stack.enter_context(warnings.catch_warnings())
    warnings.simplefilter("ignore")
    return stack


def every_model(schedule: Any, platform: Any) -> int:
    """Predict ``schedule`` under every model ``platform`` has the sections for; a
    CommodelError of one model does not stop the others. Returns the models that ran."""
    from commodel.platform import MODELS

    ran = 0
    for name, spec in MODELS.items():
        if all(s in platform.sections for s in spec.sections):
            with contextlib.suppress(CommodelError):
                predict(schedule, platform, model=name, record_messages=False)
                ran += 1
    return ran


def drive_platform(platform: Any, rng: random.Random) -> None:
    """Everything a loaded platform feeds: every model on the fixed schedules, the LMO
    closed forms, the incast rule, a gather's advice."""
    for schedule in schedules():
        every_model(schedule, platform)
    sections = platform.sections
    if "lmo" in sections:
        from commodel.lmo.closed_forms import LMOModel

        with contextlib.suppress(CommodelError):
            model = LMOModel.from_platform(platform)
            for n in (2, 3, min(8, model.nodes)):
                for m in (0, 1024, 1 << 20):
                    with contextlib.suppress(CommodelError):
                        _ = model.many_to_one(n, m).expected_s
                    with contextlib.suppress(CommodelError):
                        model.one_to_many(m, 4096)
                    with contextlib.suppress(CommodelError):
                        model.point_to_point(0, model.nodes - 1, m)
    m2o = sections.get("many_to_one")
    if m2o:
        from commodel.lmo.closed_forms import LMOModel
        from commodel.lmo.incast import predict_samples

        model = LMOModel([], [], [], m2o)
        for n in (3, 4, 9):
            for m in (1024, 20000, 1 << 20):
                with contextlib.suppress(CommodelError):
                    model.escalations(n, m)
        for name in ("plogp", "hockney", "maxmin", "tcpflow"):
            with contextlib.suppress(CommodelError):
                predict_samples(schedules()[1], platform, name, 2, rng.randrange(100))
    if rng.random() < 0.1:
        from commodel.advise.advice import advise

        collective = rng.choice(["gather", "bcast", "alltoall"])
        with contextlib.suppress(CommodelError):
            advise(platform, collective, [rng.choice([3, 4])], [rng.choice([1024, 65536])],
                   jobs=1, samples=2)  # fmt: skip


def write(name: str, data: bytes) -> Path:
    path = WORK / name
    path.write_bytes(data)
    return path


# --- the targets ------------------------------------------------------------------------


def platform_yaml(data: bytes) -> None:
    from commodel.platform import load_platform

    path = write("platform.yaml", data)
    with quiet():
        platform = load_platform(path)
        drive_platform(platform, random.Random(len(data)))


def cluster_yaml(data: bytes) -> None:
    from commodel.cluster.fabric import make_plan
    from commodel.cluster.spec import load_spec

    path = write("cluster.yaml", data)
    spec = load_spec(path)
    # what `cluster up` computes before it touches the system: names, addresses, rates
    make_plan(spec, spec.default_id())


def goal_binary(data: bytes) -> None:
    from commodel.platform import load_platform

    path = write("schedule.bin", data)
    schedule = read_goal(path)
    with quiet():
        for name in ("nomura2007", "loggopsim-default"):
            every_model(schedule, load_platform(name))


def goal_text(data: bytes) -> None:
    """GOAL text through the Python layer: parse_goal, every model, and `commodel predict`
    in-process (exit 0 or 2, no traceback). The Rust driver (examples/fuzz_goal) fuzzes the
    reader itself at far more inputs a second."""
    from commodel.platform import load_platform

    text = data.decode("utf-8", "surrogateescape")
    with quiet():
        try:
            schedule = parse_goal(text, "fuzz.goal")
        except CommodelError:
            schedule = None
        if schedule is not None:
            for name in ("nomura2007", "loggopsim-default"):
                every_model(schedule, load_platform(name))
    path = write("schedule.goal", data)
    cli(["predict", str(path), "-p", "nomura2007", "--model", "all", "--no-messages"])


_MPICH_TREE: list[Any] = []


def mpich_tree() -> Any:
    """The selection tree of the installed MPICH, read once (None without one)."""
    if not _MPICH_TREE:
        from commodel.mpis.mpich import builtin_tree, installed_library

        try:
            _MPICH_TREE.append(builtin_tree(installed_library()))
        except CommodelError:
            _MPICH_TREE.append(None)
    return _MPICH_TREE[0]


def rules(data: bytes) -> None:
    """Every reader of rules files on the same bytes (Open MPI 4.1's and 5.0's, MPICH's
    JSON), the rule lookup on what parses, then `advise --check-rules FILE --mpi M` for the
    MPI the file is written for (given, so that no `mpirun --version` runs): its function
    on every file, the whole CLI in-process on one in eight (its parser costs as much as
    the rest), and the reader of --use-rules."""
    from commodel.advise.rules import lookup, parse_rules
    from commodel.cli.advise import check_rules, read_given_rules
    from commodel.mpis.mpich import check_json

    for version in ("openmpi-4.1", "openmpi-5.0"):
        result = parse_rules(data, version)
        for table in result.tables[:8]:
            for p in (1, 2, 8, 2**31):
                for m in (0, 1, 1 << 20):
                    lookup(result.tables, table.collective_id, p, m)
    check_json(data, mpich_tree())
    path = str(write("rules.txt", data))
    if data.lstrip()[:1] in (b"{", b"["):
        # the CLI reads MPICH's library (60 ms) for its tree: one file in 16
        if zlib.crc32(data) % 16 == 0:
            cli(["advise", "--check-rules", path, "--mpi", "mpich"])
        return
    mpi = "openmpi-5.0" if data.startswith(b"rule-file-version") else "openmpi-4.1"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(CommodelError):
        check_rules(path, mpi)
    if zlib.crc32(data) % 8 == 0:
        cli(["advise", "--check-rules", path, "--mpi", mpi])
    with contextlib.suppress(CommodelError):
        read_given_rules(path, "bcast")


_INTEL_RANGES: list[Any] = []


def intel_ranges() -> Any:
    """The installed Intel MPI's preset ranges (``impi_info``, asked once), None without
    one."""
    if not _INTEL_RANGES:
        from commodel.mpis.intelmpi import installed_prefix, preset_ranges

        prefix = installed_prefix()
        _INTEL_RANGES.append(preset_ranges(prefix) if prefix else None)
    return _INTEL_RANGES[0]


def intel_settings(data: bytes) -> None:
    """An Intel MPI settings file: the checker of `advise --check-rules --mpi intel-mpi`
    (without and with the installed build's preset ranges), the reader that puts the file's
    variables in a run's environment, each variable read and looked up as the library
    selects, what `measure collective` records of it in its environment; the whole CLI
    in-process on one file in 16 (it asks impi_info for the ranges each time)."""
    from commodel.measure.collective import forced_algorithm, label_of
    from commodel.mpis.intelmpi import ALGORITHMS, adjust_env, check_settings, lookup, parse_adjust

    ranges = intel_ranges()
    check_settings(data, "settings", None)
    if ranges:
        check_settings(data, "settings", ranges)
    path = write("settings.env", data)
    try:
        env = adjust_env("allreduce", 0, str(path))
    except CommodelError:
        env = {}
    for name, value in env.items():
        coll = name.removeprefix("I_MPI_ADJUST_").lower()
        items, _problems = parse_adjust(coll, value, (ranges or {}).get(coll))
        for ranks in (1, 4, 2**31 - 1):
            for size in (0, 1024, 2**31 - 1, 2**40):
                lookup(items, ranks, size)
        if coll in ALGORITHMS:
            with contextlib.suppress(CommodelError):
                forced = forced_algorithm(coll, {name: value})
                label_of(coll, forced["algorithm"], {name: value})
    if zlib.crc32(data) % 16 == 0:
        cli(["advise", "--check-rules", str(path), "--mpi", "intel-mpi"])


def results_db(plan: dict[str, Any]) -> None:
    from commodel.fit.assemble import fit_platform
    from commodel.platform import platform_from_dict

    path = WORK / "results.duckdb"
    build_db(path, plan)
    with quiet():
        try:
            doc, _comments = fit_platform(str(path))
        except CommodelError:
            doc = None
        if doc is not None:
            drive_platform(platform_from_dict(doc, "fitted.yaml"), random.Random(0))
    cli(["db", "list", "--db", str(path)])


_MEMORY: list[Any] = []  # one DuckDB connection, one in-memory database per input


def results_db_memory(plan: dict[str, Any]) -> None:
    """The plan of a results database (the same grammar as `results-db`), built in a fresh
    in-memory DuckDB database attached to one connection: a real database, opened and
    checked by ResultsDB as fit opens a file, then fit and every model on what it fits,
    and what `db list` reads. 3 ms to make a database where a file costs some 80 ms (a
    connection each time it is opened, a checkpoint each time it is closed); the file,
    its write-ahead log and the CLI are `results-db`'s."""
    import duckdb

    from commodel.db import ResultsDB
    from commodel.fit.assemble import fit_platform
    from commodel.platform import platform_from_dict

    if not _MEMORY:
        _MEMORY.append(duckdb.connect(":memory:"))
    con = _MEMORY[0]
    con.execute("ATTACH ':memory:' AS fuzz")
    con.execute("USE fuzz")
    label = "memory.duckdb"
    try:
        if plan["schema"] != "empty-file":  # in memory: a database without a table
            with ResultsDB(label, con=con) as db:
                fill_db(db, plan)
            break_db(con, plan["schema"])
        with quiet():
            try:
                with ResultsDB(label, read_only=True, con=con) as db:
                    doc, _comments = fit_platform(label, opened=db)
                    for c in db.campaigns():  # what `db list` prints
                        db.count_samples(c.id)
            except CommodelError:
                doc = None
            if doc is not None:
                drive_platform(platform_from_dict(doc, "fitted.yaml"), random.Random(0))
    finally:
        con.execute("USE memory")
        con.execute("DETACH fuzz")


def build_db(path: Path, plan: dict[str, Any]) -> None:
    """The database of ``plan`` (:func:`other_inputs.results_db`), written through
    ResultsDB as `measure` writes, then broken as the plan's ``schema`` says."""
    import duckdb

    from commodel.db import ResultsDB

    for stale in (path, Path(f"{path}.wal")):
        stale.unlink(missing_ok=True)
    if plan["schema"] == "empty-file":
        path.write_bytes(b"")
        return
    with ResultsDB(path) as db:
        fill_db(db, plan)
    con = duckdb.connect(str(path))
    try:
        break_db(con, plan["schema"])
    finally:
        con.close()


def fill_db(db: Any, plan: dict[str, Any]) -> None:
    """The plan's campaigns, written through ``db`` (a ResultsDB) as `measure` writes."""
    for c in plan["campaigns"]:
        cid = db.create_campaign(
            c["benchmark"], "fuzz", c["options"], c["hosts"], "Open MPI", "4.1.4"
        )
        rows = [
            {"step": f"{phase}/{pattern}/m={m}/n={n_msgs}/r={rep}/k={n_ranks}", "benchmark": c["benchmark"],
             "phase": phase, "pattern": pattern, "quantity": quantity, "size_bytes": m,
             "n_ranks": n_ranks, "n_msgs": n_msgs, "repetition": rep, "value_s": value}
            for phase, pattern, quantity, m, n_ranks, n_msgs, rep, value in c["rows"]
        ]  # fmt: skip
        if rows:
            db.write_step(cid, rows)
        if c["status"] in ("complete", "failed"):
            db.set_status(cid, c["status"])
        else:
            db.con.execute("UPDATE campaigns SET status = ? WHERE id = ?", [c["status"], cid])


def break_db(con: Any, fault: str) -> None:
    """The plan's fault in the tables of the database ``con`` is on."""
    if fault == "ok":
        return
    statements = {
        "meta-only": ["DROP TABLE campaigns", "DROP TABLE samples", "DROP TABLE phase_times"],
        "no-samples": ["DROP TABLE samples"],
        "no-phase-times": ["DROP TABLE phase_times"],
        "value-text": ["ALTER TABLE samples ALTER value_s TYPE VARCHAR"],
        "version-2": ["UPDATE meta SET value = '2'"],
        "no-version": ["DELETE FROM meta"],
        "extra-column": ["ALTER TABLE campaigns ADD COLUMN x INTEGER"],
    }[fault]
    for sql in statements:
        con.execute(sql)


def cli(args: list[str]) -> None:
    """``commodel ARGS`` in-process: exit 0 or 2 and no traceback, or AssertionError."""
    from commodel.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), quiet():
        try:
            code = main(args)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    if code not in (0, 2) or "Traceback" in err.getvalue() or "internal error" in err.getvalue():
        raise AssertionError(f"commodel {' '.join(args)}: exit {code}: {err.getvalue()[-400:]}")


# --- GOAL text inputs --------------------------------------------------------------------

GOAL_PIECES = ["num_ranks ", "rank ", "{", "}", "\n", " ", "send ", "recv ", "calc ", "to ", "from ",
               "tag ", "cpu ", "nic ", "requires ", "irequires ", "b", "KiB", "MiB", "-1", "0", "1",
               "2", "4294967295", "18446744073709551615", "18446744073709551616", "a: ", "b: ",
               "//", "/*", "*/", "\x00", "\xff", "\ufeff"]  # fmt: skip


def goal_text_input(rng: random.Random) -> bytes:
    """A random program written as GOAL (matched or not), then token edits."""
    ranks = rng.randrange(1, 5)
    bodies: list[list[str]] = [[] for _ in range(ranks)]
    for k in range(rng.randrange(0, 8)):
        src, dst = rng.randrange(ranks), rng.randrange(ranks)
        size = yaml_inputs.pick(
            rng, ["0b", "1b", "1024b", "64KiB", "1MiB", "18446744073709551615b"]
        )
        if src == dst:
            bodies[src].append(f"c{k}: calc {rng.choice([0, 1000, 10**12, 18446744073709551615])}")
        else:
            bodies[src].append(f"s{k}: send {size} to {dst} tag {k}")
            bodies[dst].append(
                f"r{k}: recv {size} from {rng.choice([src, -1])} tag {rng.choice([k, -1])}"
            )
    for body in bodies:
        if len(body) > 1 and rng.random() < 0.5:
            a, b = body[-1].split(":")[0], body[0].split(":")[0]
            body.append(f"{a} {rng.choice(['requires', 'irequires'])} {b}")
    text = f"num_ranks {ranks}\n" + "".join(
        f"rank {r} {{\n" + "\n".join(b) + "\n}\n" for r, b in enumerate(bodies)
    )
    for _ in range(rng.choice([0, 0, 1, 2, 3])):
        at = rng.randrange(len(text) + 1)
        kind = rng.randrange(3)
        if kind == 0:
            text = text[:at] + yaml_inputs.pick(rng, GOAL_PIECES) + text[at:]
        elif kind == 1:
            text = text[:at] + text[at + rng.randrange(1, 12) :]
        else:
            text = text[:at] + text[at : at + 40] + text[at:]
    return text.encode("utf-8", "surrogateescape")


Target = tuple[Callable[[random.Random], Any], Callable[[Any], None]]

TARGETS: dict[str, Target] = {
    "platform-yaml": (lambda rng: yaml_inputs.document_bytes(rng, yaml_inputs.platform_document), platform_yaml),
    "cluster-yaml": (lambda rng: yaml_inputs.document_bytes(rng, yaml_inputs.cluster_document), cluster_yaml),
    "goal-text": (goal_text_input, goal_text),
    "goal-binary": (other_inputs.goal_binary, goal_binary),
    "rules": (other_inputs.rules_file, rules),
    "intel-settings": (other_inputs.intel_settings, intel_settings),
    "results-db": (other_inputs.results_db, results_db),
    "results-db-memory": (other_inputs.results_db, results_db_memory),
}  # fmt: skip


def generate(target: str, seed: int) -> Any:
    """The input of ``target`` number ``seed`` (the same on every run)."""
    return TARGETS[target][0](random.Random(f"{target}/{seed}"))


def check(target: str, value: Any) -> None:
    TARGETS[target][1](value)


os.environ.setdefault("COMMODEL_GENERATE_THREADS", "1")  # one core per worker
