"""The results database: every raw measurement sample, in one DuckDB file.

Layout (``docs/measurement.md`` describes every column):

* ``campaigns``: one row per ``commodel measure`` campaign: id, when it started, the command
  line, the options (JSON, sorted keys), the host of every rank (JSON list), the MPI library
  and MPI standard version, the number of ranks, how often it was (re)started, its status
  (``running``, ``complete``, ``failed``).
* ``samples``: one row per raw sample, written as it is taken. A *step* is one batch of
  samples taken together (e.g. 5 roundtrip pairs of one size); every step is written in one
  transaction, so a campaign killed at any moment keeps every finished step and loses at
  most the step in flight. ``--resume`` replays the stored steps instead of measuring them
  again, so each sample is stored exactly once.
* ``phase_times``: wall time spent in each phase of a campaign run (Kielmann Table 2).

Only MPI rank 0 opens the database.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import CommodelError, MissingDependencyError

SCHEMA_VERSION = 1

# Column order of `samples` (after campaign and seq), as written by write_step.
SAMPLE_COLUMNS = (
    "step",
    "benchmark",
    "phase",
    "pattern",
    "quantity",
    "size_bytes",
    "n_ranks",
    "n_msgs",
    "repetition",
    "value_s",
    "src",
    "dst",
    "hosts",
    "extra",
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE IF NOT EXISTS campaigns (
    id INTEGER PRIMARY KEY,
    benchmark VARCHAR NOT NULL,
    started TIMESTAMP NOT NULL,
    finished TIMESTAMP,
    command VARCHAR NOT NULL,
    options VARCHAR NOT NULL,
    hosts VARCHAR NOT NULL,
    mpi_library VARCHAR NOT NULL,
    mpi_version VARCHAR NOT NULL,
    ranks INTEGER NOT NULL,
    runs INTEGER NOT NULL,
    status VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS samples (
    campaign INTEGER NOT NULL,
    seq BIGINT NOT NULL,
    step VARCHAR NOT NULL,
    benchmark VARCHAR NOT NULL,
    phase VARCHAR NOT NULL,
    pattern VARCHAR NOT NULL,
    quantity VARCHAR NOT NULL,
    size_bytes BIGINT NOT NULL,
    n_ranks INTEGER NOT NULL,
    n_msgs BIGINT NOT NULL,
    repetition INTEGER NOT NULL,
    value_s DOUBLE NOT NULL,
    src INTEGER,
    dst INTEGER,
    hosts VARCHAR,
    extra VARCHAR,
    taken TIMESTAMP NOT NULL
);
CREATE TABLE IF NOT EXISTS phase_times (
    campaign INTEGER NOT NULL,
    run INTEGER NOT NULL,
    phase VARCHAR NOT NULL,
    elapsed_s DOUBLE NOT NULL
);
"""


def _columns(con: Any) -> dict[str, dict[str, str]]:
    """table -> column -> type of the database ``con`` (its main schema)."""
    out: dict[str, dict[str, str]] = {}
    rows = con.execute(
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = 'main' AND table_catalog = current_database()"
    ).fetchall()
    for table, column, kind in rows:
        out.setdefault(table, {})[column] = kind
    return out


@functools.lru_cache(maxsize=1)
def _expected_columns() -> dict[str, dict[str, str]]:
    """The tables and columns of :data:`_SCHEMA`, as DuckDB names their types."""
    con = _duckdb().connect(":memory:")
    try:
        con.execute(_SCHEMA)
        return _columns(con)
    finally:
        con.close()


def _duckdb():
    try:
        import duckdb
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise MissingDependencyError("duckdb", "measure", "the results database") from exc
    return duckdb


@dataclass(frozen=True)
class Campaign:
    """One row of ``campaigns``."""

    id: int
    benchmark: str
    started: _dt.datetime
    finished: _dt.datetime | None
    command: str
    options: dict[str, Any]
    hosts: list[str]
    mpi_library: str
    mpi_version: str
    ranks: int
    runs: int
    status: str


def options_json(options: dict[str, Any]) -> str:
    """The canonical JSON text of a campaign's options (sorted keys, no spaces)."""
    return json.dumps(options, sort_keys=True, separators=(",", ":"))


class ResultsDB:
    """A DuckDB results database (``path``); created with its schema if it does not exist.

    ``read_only`` opens an existing file without modifying it (for fit, plot, db list).
    ``con``: a DuckDB connection already open on the database (its current one; ``path``
    then only names it in messages), which :meth:`close` leaves open: the fuzzer's
    in-memory databases, one connection for many.
    """

    def __init__(
        self, path: str | os.PathLike[str], read_only: bool = False, con: Any = None
    ) -> None:
        self.path = os.fspath(path)
        self._owns = con is None
        self.con = con if con is not None else self._connect(read_only)
        if not read_only:
            self.con.execute(_SCHEMA)
            self.con.execute(
                "INSERT INTO meta VALUES ('schema_version', ?) ON CONFLICT DO NOTHING",
                [str(SCHEMA_VERSION)],
            )
        self._check_schema()
        self._seq: dict[int, int] = {}

    def _connect(self, read_only: bool) -> Any:
        duckdb = _duckdb()
        if read_only and not os.path.exists(self.path):
            raise CommodelError(f"{self.path}: no such results database")
        if read_only and os.path.exists(self.path + ".wal"):
            # A campaign killed before DuckDB checkpointed leaves its steps in the
            # write-ahead log, which a read-only connection does not replay: replay it.
            try:
                con = duckdb.connect(self.path)
                con.execute("CHECKPOINT")
                con.close()
            except duckdb.Error as exc:
                raise CommodelError(
                    f"{self.path}: cannot open the results database: {exc}"
                ) from exc
        try:
            return duckdb.connect(self.path, read_only=read_only)
        except duckdb.Error as exc:
            raise CommodelError(f"{self.path}: cannot open the results database: {exc}") from exc

    def _check_schema(self) -> None:
        try:
            row = self.con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        except Exception as exc:
            raise CommodelError(f"{self.path}: not a commodel results database ({exc})") from exc
        if row is None or row[0] != str(SCHEMA_VERSION):
            found = None if row is None else row[0]
            raise CommodelError(
                f"{self.path}: results database schema version {found}, "
                f"this commodel reads version {SCHEMA_VERSION}"
            )
        # every table of the schema, with every column of its type: a file that holds only
        # `meta` (or a column changed by hand) is refused here, not by the first query
        have = _columns(self.con)
        for table, columns in _expected_columns().items():
            if table not in have:
                raise CommodelError(
                    f"{self.path}: not a complete commodel results database: no table {table!r}"
                )
            for column, kind in columns.items():
                found_kind = have[table].get(column)
                if found_kind != kind:
                    problem = "missing" if found_kind is None else f"of type {found_kind}"
                    raise CommodelError(
                        f"{self.path}: table {table!r}: column {column!r} is {problem}, "
                        f"expected {kind}"
                    )

    def close(self) -> None:
        if self._owns:
            self.con.close()

    def __enter__(self) -> ResultsDB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- campaigns -------------------------------------------------------------------------

    def create_campaign(
        self,
        benchmark: str,
        command: str,
        options: dict[str, Any],
        hosts: Sequence[str],
        mpi_library: str,
        mpi_version: str,
    ) -> int:
        """Insert a new campaign in state ``running`` and return its id."""
        (next_id,) = self.con.execute("SELECT coalesce(max(id), 0) + 1 FROM campaigns").fetchone()
        self.con.execute(
            "INSERT INTO campaigns VALUES (?, ?, ?, NULL, ?, ?, ?, ?, ?, ?, 1, 'running')",
            [
                next_id,
                benchmark,
                _now(),
                command,
                options_json(options),
                json.dumps(list(hosts)),
                mpi_library,
                mpi_version,
                len(hosts),
            ],
        )
        return int(next_id)

    def campaigns(self) -> list[Campaign]:
        rows = self.con.execute(
            "SELECT id, benchmark, started, finished, command, options, hosts, mpi_library, "
            "mpi_version, ranks, runs, status FROM campaigns ORDER BY id"
        ).fetchall()
        return [
            Campaign(
                id=r[0],
                benchmark=r[1],
                started=r[2],
                finished=r[3],
                command=r[4],
                options=json.loads(r[5]),
                hosts=json.loads(r[6]),
                mpi_library=r[7],
                mpi_version=r[8],
                ranks=r[9],
                runs=r[10],
                status=r[11],
            )
            for r in rows
        ]

    def campaign(self, campaign_id: int) -> Campaign:
        for c in self.campaigns():
            if c.id == campaign_id:
                return c
        raise CommodelError(f"{self.path}: no campaign {campaign_id}")

    def resumable(self, benchmark: str, campaign_id: int | None) -> Campaign:
        """The campaign ``--resume`` continues: ``campaign_id``, or the latest unfinished one."""
        if campaign_id is not None:
            c = self.campaign(campaign_id)
            if c.benchmark != benchmark:
                raise CommodelError(
                    f"{self.path}: campaign {campaign_id} measured {c.benchmark!r}, "
                    f"not {benchmark!r}; it cannot be resumed by 'measure {benchmark}'"
                )
            return c
        unfinished = [
            c for c in self.campaigns() if c.benchmark == benchmark and c.status != "complete"
        ]
        if not unfinished:
            raise CommodelError(f"{self.path}: no unfinished {benchmark!r} campaign to resume")
        return unfinished[-1]

    def restart_campaign(self, campaign_id: int) -> int:
        """Mark a resumed campaign running again; returns its run number (1 = first run)."""
        self.con.execute(
            "UPDATE campaigns SET runs = runs + 1, status = 'running', finished = NULL "
            "WHERE id = ?",
            [campaign_id],
        )
        (runs,) = self.con.execute(
            "SELECT runs FROM campaigns WHERE id = ?", [campaign_id]
        ).fetchone()
        return int(runs)

    def set_status(self, campaign_id: int, status: str) -> None:
        finished = _now() if status == "complete" else None
        self.con.execute(
            "UPDATE campaigns SET status = ?, finished = ? WHERE id = ?",
            [status, finished, campaign_id],
        )

    # -- samples -----------------------------------------------------------------------------

    def stored_steps(self, campaign_id: int) -> dict[str, list[dict[str, Any]]]:
        """Every stored step of a campaign: step key -> its sample rows in repetition order."""
        out: dict[str, list[dict[str, Any]]] = {}
        for row in self.samples(campaign_id):
            out.setdefault(row["step"], []).append(row)
        return out

    def write_step(self, campaign_id: int, rows: Iterable[dict[str, Any]]) -> None:
        """Write the samples of one step in a single transaction."""
        rows = list(rows)
        if not rows:
            return
        seq = self._seq.get(campaign_id)
        if seq is None:
            (seq,) = self.con.execute(
                "SELECT coalesce(max(seq), 0) FROM samples WHERE campaign = ?", [campaign_id]
            ).fetchone()
        now = _now()
        values = []
        for i, r in enumerate(rows, start=1):
            extra = r.get("extra")
            values.append(
                [campaign_id, seq + i]
                + [
                    r.get("step"),
                    r.get("benchmark"),
                    r.get("phase"),
                    r.get("pattern", ""),
                    r.get("quantity"),
                    int(r.get("size_bytes", 0)),
                    int(r.get("n_ranks", 2)),
                    int(r.get("n_msgs", 1)),
                    int(r.get("repetition", 0)),
                    float(r["value_s"]),
                    r.get("src"),
                    r.get("dst"),
                    r.get("hosts"),
                    None if extra is None else json.dumps(extra, sort_keys=True),
                    now,
                ]
            )
        # one statement, hence one transaction: the step is stored whole or not at all
        placeholders = ", ".join(["(" + ", ".join(["?"] * 17) + ")"] * len(values))
        self.con.execute(
            "INSERT INTO samples VALUES " + placeholders, [x for v in values for x in v]
        )
        self._seq[campaign_id] = seq + len(values)

    def samples(self, campaign_id: int, benchmark: str | None = None) -> list[dict[str, Any]]:
        """The samples of a campaign, in the order they were taken."""
        query = "SELECT seq, " + ", ".join(SAMPLE_COLUMNS) + " FROM samples WHERE campaign = ?"
        params: list[Any] = [campaign_id]
        if benchmark is not None:
            query += " AND benchmark = ?"
            params.append(benchmark)
        query += " ORDER BY seq"
        cols = ("seq",) + SAMPLE_COLUMNS
        out = []
        for row in self.con.execute(query, params).fetchall():
            d = dict(zip(cols, row))
            value = d["value_s"]
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                raise CommodelError(
                    f"{self.path}: campaign {campaign_id}, sample {d['seq']} (step "
                    f"{d['step'][:80]!r}, {d['quantity']}): value_s is {value!r}; a "
                    "measured value is a finite number"
                )
            try:
                d["extra"] = None if d["extra"] is None else json.loads(d["extra"])
            except ValueError as exc:
                raise CommodelError(
                    f"{self.path}: campaign {campaign_id}, sample {d['seq']}: its extra field "
                    f"is not JSON ({exc})"
                ) from exc
            out.append(d)
        return out

    def count_samples(self, campaign_id: int) -> int:
        (n,) = self.con.execute(
            "SELECT count(*) FROM samples WHERE campaign = ?", [campaign_id]
        ).fetchone()
        return int(n)

    # -- phase times -------------------------------------------------------------------------

    def add_phase_time(self, campaign_id: int, run: int, phase: str, elapsed_s: float) -> None:
        self.con.execute(
            "INSERT INTO phase_times VALUES (?, ?, ?, ?)", [campaign_id, run, phase, elapsed_s]
        )

    def phase_times(self, campaign_id: int) -> dict[str, float]:
        """Seconds spent per phase, summed over the runs of a (resumed) campaign."""
        rows = self.con.execute(
            "SELECT phase, sum(elapsed_s) FROM phase_times WHERE campaign = ? "
            "GROUP BY phase ORDER BY min(rowid)",
            [campaign_id],
        ).fetchall()
        return {p: float(t) for p, t in rows}

    # -- export ------------------------------------------------------------------------------

    def export(self, directory: str | os.PathLike[str], fmt: str = "parquet") -> list[str]:
        """Write every table to ``directory/<table>.<fmt>`` (``parquet`` or ``csv``)."""
        if fmt not in ("parquet", "csv"):
            raise CommodelError(f"export format must be 'parquet' or 'csv', got {fmt!r}")
        directory = os.fspath(directory)
        os.makedirs(directory, exist_ok=True)
        written = []
        for table in ("campaigns", "samples", "phase_times"):
            target = os.path.join(directory, f"{table}.{fmt}")
            option = "(FORMAT PARQUET)" if fmt == "parquet" else "(FORMAT CSV, HEADER)"
            quoted = target.replace("'", "''")
            self.con.execute(f"COPY (SELECT * FROM {table} ORDER BY ALL) TO '{quoted}' {option}")
            written.append(target)
        return written


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None, microsecond=0)
