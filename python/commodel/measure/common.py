"""The SPMD harness every benchmark runs in.

Rank 0 is the *controller*: it runs the benchmark's procedure (which may adapt to what it
measured), and for every *step* (one batch of samples, e.g. five roundtrip pairs of one
size) it broadcasts a command naming a *kernel* and its parameters. Every rank runs the
kernel (the timed MPI code, the only part that sends messages), rank 0 gathers what the
ranks return, turns it into sample rows and writes them to the results database in one
transaction. The other ranks only execute kernels, so control flow never diverges.

Resume: every step has a key that depends only on the procedure's decisions so far; when a
campaign is resumed, rank 0 returns the stored samples of a step instead of measuring it,
which replays the same decisions up to where the earlier run stopped.

Errors: a :class:`CommodelError` on rank 0 between steps reaches every rank (they exit 2,
rank 0 reports it). Before a kernel runs, every rank prepares it (allocates buffers,
checks parameters); a failure there is gathered to rank 0, which reports it naming the rank
and host, and every rank exits 2. An exception inside a running kernel cannot be delivered
to a rank blocked in a receive, so the failing rank prints the message naming itself and
calls ``MPI_Abort(2)``, which ends every rank with exit code 2.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import CommodelError

MPI_INSTALL_HINT = (
    "the Python module 'mpi4py' is not installed or does not match the MPI library; "
    "install an MPI library and mpi4py, e.g. on Debian/Ubuntu: "
    "'apt-get install libopenmpi-dev openmpi-bin' then 'pip install mpi4py' "
    "(or pip install 'commodel[measure]'), and run under mpirun"
)


def import_mpi():
    """Import ``mpi4py.MPI`` (initialising MPI), or raise an error saying how to install it."""
    try:
        import mpi4py
    except ImportError as exc:
        raise CommodelError(MPI_INSTALL_HINT) from exc
    # One thread drives MPI; a higher thread level only adds locking to the timed calls.
    mpi4py.rc.thread_level = "single"
    try:
        from mpi4py import MPI
    except (ImportError, RuntimeError) as exc:
        raise CommodelError(f"{MPI_INSTALL_HINT} ({exc})") from exc
    return MPI


def increasing_sizes(option: str, values: Any, least: int = 1) -> list[int]:
    """``values`` as a list of strictly increasing sizes of at least ``least`` bytes, or an
    error naming ``option``."""
    sizes = [int(s) for s in values]
    if not sizes or sizes[0] < least or sizes != sorted(set(sizes)):
        unit = "byte" if least == 1 else "bytes"
        raise CommodelError(f"{option} must be increasing sizes >= {least} {unit}, got {sizes}")
    return sizes


def seconds(option: str, value: Any) -> float:
    """``value`` as a finite number of seconds >= 0, or an error naming ``option``."""
    s = float(value)
    if not 0.0 <= s < float("inf"):
        raise CommodelError(f"{option} must be seconds >= 0 (a finite number), got {value}")
    return s


# --- progress ----------------------------------------------------------------------------


class Progress:
    """A one-line progress bar with an estimate of the time left, on stderr of rank 0.

    Quiet when ``enabled`` is false (other ranks, ``--quiet``) or stderr is not a terminal.
    The total is an estimate the procedure may raise as it learns (adaptive sizes).
    """

    def __init__(self, total: float, label: str, enabled: bool = True, stream: Any = None):
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.total = max(float(total), 1.0)
        self.done = 0.0
        self.label = label
        self.start = time.monotonic()
        self._last_draw = 0.0

    def advance(self, amount: float = 1.0, label: str | None = None) -> None:
        self.done += amount
        if label is not None:
            self.label = label
        self.total = max(self.total, self.done)
        self._draw()

    def grow(self, amount: float) -> None:
        """Raise the estimated total (the procedure found more work)."""
        self.total += amount

    def _draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last_draw < 0.1:
            return
        self._last_draw = now
        self.stream.write("\r" + self.line(now) + "\x1b[K")
        self.stream.flush()

    def line(self, now: float | None = None) -> str:
        now = time.monotonic() if now is None else now
        frac = min(self.done / self.total, 1.0)
        width = 24
        filled = int(round(frac * width))
        elapsed = now - self.start
        if self.done > 0 and frac < 1.0:
            eta = format_eta(elapsed * (self.total - self.done) / self.done)
        elif frac >= 1.0:
            eta = "done"
        else:
            eta = "--:--"
        bar = "#" * filled + "." * (width - filled)
        return f"[{bar}] {100 * frac:5.1f}% ETA {eta:>7} {self.label}"[:120]

    def close(self) -> None:
        if self.enabled:
            self._draw(force=True)
            self.stream.write("\n")
            self.stream.flush()


def format_eta(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


# --- steps, kernels --------------------------------------------------------------------------


@dataclass
class StepResult:
    """What a step gives the procedure: the per-rank kernel outputs (rank 0 only)."""

    key: str
    per_rank: list[Any]
    replayed: bool = False


# A kernel: prepare(ctx, params) -> state (may raise), run(ctx, state) -> picklable output.
@dataclass(frozen=True)
class Kernel:
    """A registered kernel: ``prepare(ctx, params) -> state``, ``run(ctx, state) -> output``
    and, for kernels that only some ranks take part in, ``sits_out(ctx, state) -> bool``."""

    prepare: Callable[[Context, dict], Any]
    run: Callable[[Context, Any], Any]
    sits_out: Callable[[Context, Any], bool] | None = None


KERNELS: dict[str, Kernel] = {}


def kernel(
    name: str,
    prepare: Callable[[Context, dict], Any] | None = None,
    sits_out: Callable[[Context, Any], bool] | None = None,
):
    """Register ``run(ctx, state)`` as kernel ``name`` (prepare defaults to passing params).

    ``sits_out(ctx, state)`` names the ranks that take no part in the kernel (``state``:
    what prepare returned): they wait for it outside real-time scheduling (see
    :func:`out_of_realtime`). The ranks that run it must then not call collectives of
    ``ctx.comm``: they talk in a communicator of their own, split in prepare.
    """

    def wrap(run: Callable[[Context, Any], Any]):
        KERNELS[name] = Kernel(prepare or (lambda ctx, params: params), run, sits_out)
        return run

    return wrap


class _Stop(Exception):
    pass


@dataclass
class Context:
    """One rank's view of a running campaign."""

    MPI: Any
    comm: Any
    rank: int
    size: int
    hosts: list[str]
    ctl: Any = None  # a duplicate of comm for the controller's messages (politely waited on)
    db: Any = None  # ResultsDB on rank 0
    campaign: int = 0
    run: int = 1
    benchmark: str = ""
    stored: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    progress: Progress | None = None
    _buffers: dict[str, Any] = field(default_factory=dict)
    cache: dict[str, Any] = field(default_factory=dict)  # per-rank state kept across steps
    steps_measured: int = 0
    steps_replayed: int = 0

    def split(self, ranks: tuple[int, ...]):
        """The communicator of ``ranks`` (in rank order; COMM_NULL on the others), for kernels
        whose other ranks sit out: split once per set of ranks, collectively, so every rank
        must call it in prepare; ``comm`` itself when ``ranks`` are all of them."""
        if len(ranks) == self.size:
            return self.comm
        key = ("split", ranks)
        if key not in self.cache:
            color = 0 if self.rank in ranks else self.MPI.UNDEFINED
            self.cache[key] = self.comm.Split(color, self.rank)
        return self.cache[key]

    # buffers reused across steps, grown on demand (touching every page once)
    def buffer(self, nbytes: int, name: str = "main"):
        import numpy as np

        buf = self._buffers.get(name)
        if buf is None or buf.nbytes < nbytes:
            buf = np.zeros(max(int(nbytes), 1), dtype=np.uint8)
            buf[:] = self.rank & 0xFF
            self._buffers[name] = buf
        return buf

    def host_of(self, rank: int) -> str:
        return self.hosts[rank]

    def wtime(self) -> float:
        return self.MPI.Wtime()

    # -- controller side ---------------------------------------------------------------------

    def step(
        self,
        key: str,
        kernel_name: str,
        params: dict,
        rows: Callable[[list[Any]], list[dict[str, Any]]],
        replay: Callable[[list[dict[str, Any]]], list[Any]] | None = None,
    ) -> StepResult:
        """Run (or replay) one step; rank 0 only.

        ``rows`` turns the gathered per-rank outputs into sample rows (each gets ``step`` set to
        ``key``); ``replay`` turns stored rows back into per-rank outputs when resuming.
        """
        assert self.rank == 0
        stored = self.stored.get(key)
        if stored is not None:
            if replay is None:
                raise CommodelError(f"internal: step {key!r} cannot be replayed")
            self.steps_replayed += 1
            return StepResult(key, replay(stored), replayed=True)
        polite_bcast(self.ctl, ("kernel", kernel_name, params))
        outputs = _execute(self, kernel_name, params)
        sample_rows = rows(outputs)
        for r in sample_rows:
            r["step"] = key
            r.setdefault("benchmark", self.benchmark)
        self.db.write_step(self.campaign, sample_rows)
        self.steps_measured += 1
        return StepResult(key, outputs)

    def phase(self, name: str) -> _PhaseTimer:
        return _PhaseTimer(self, name)


class _PhaseTimer:
    def __init__(self, ctx: Context, name: str):
        self.ctx = ctx
        self.name = name

    def __enter__(self) -> _PhaseTimer:
        self.start = time.monotonic()
        return self

    def __exit__(self, exc_type, *rest: object) -> None:
        if exc_type is None:
            self.elapsed = time.monotonic() - self.start
            self.ctx.db.add_phase_time(self.ctx.campaign, self.ctx.run, self.name, self.elapsed)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, CommodelError):
        return str(exc)
    if isinstance(exc, MemoryError):
        return "out of memory"
    return f"{type(exc).__name__}: {exc}"


def _execute(ctx: Context, kernel_name: str, params: dict) -> list[Any]:
    """Every rank: prepare, agree that all prepared, run; rank 0 gets the outputs."""
    k = KERNELS[kernel_name]
    error = None
    state = None
    try:
        state = k.prepare(ctx, params)
    except Exception as exc:  # reported by rank 0 below
        error = _describe(exc)
    errors = polite_gather(ctx.ctl, error)
    verdict = None
    if ctx.rank == 0:
        bad = [(r, e) for r, e in enumerate(errors) if e is not None]
        if bad:
            verdict = "; ".join(f"rank {r} ({ctx.hosts[r]}): {e}" for r, e in bad)
    verdict = polite_bcast(ctx.ctl, verdict)
    if verdict is not None:
        if ctx.rank == 0:
            raise CommodelError(f"{kernel_name}: {verdict}")
        raise _Stop()
    if k.sits_out is not None and k.sits_out(ctx, state):
        with out_of_realtime():
            polite_barrier(ctx.comm)
        out = None
    else:
        try:
            out = k.run(ctx, state)
        except Exception as exc:
            _abort(ctx, f"{kernel_name}: {_describe(exc)}", exc)
        polite_barrier(ctx.comm)
    # The outputs are gathered politely: rank 0 sends the next command only once every
    # rank's output is in, and a rank that sat out sends its output only once it is back
    # in its scheduling class, so no rank spins on one outside it.
    return polite_gather(ctx.ctl, out)


@contextlib.contextmanager
def out_of_realtime():
    """Run the block with this process's threads under SCHED_OTHER, if they were real-time.

    ``cluster mpirun`` runs the ranks under SCHED_RR (less noise on a machine of 2 cores).
    A real-time rank that waits for a kernel it takes no part in still wakes and runs
    when a measuring rank yields, and on two-rack-16 the 14 idle ranks doubled to
    quintupled PLogP's o_r (docs/measurement.md, *plogp: Kielmann's fast method*;
    without real-time ranks the 16-rank o_r is within 1 us of the 2-rank one). Outside real-time scheduling
    they get no core while the measuring ranks work. The block must only wait politely
    (sleeping, as :func:`polite_barrier` does), and the caller must see to it that no
    real-time rank spins on this one until it has left the block: a real-time task that
    spins starves it (its yields go to real-time tasks only).
    """
    saved = {}
    for tid in _threads():
        try:
            policy = os.sched_getscheduler(tid)
            if policy in (os.SCHED_RR, os.SCHED_FIFO):
                saved[tid] = (policy, os.sched_getparam(tid).sched_priority)
                os.sched_setscheduler(tid, os.SCHED_OTHER, os.sched_param(0))
        except (ProcessLookupError, PermissionError):
            continue  # a thread that ended meanwhile, or one we may not change
    try:
        yield
    finally:
        for tid, (policy, priority) in saved.items():
            try:
                os.sched_setscheduler(tid, policy, os.sched_param(priority))
            except (ProcessLookupError, PermissionError):
                continue


def _threads() -> list[int]:
    try:
        return [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        return [0]  # no /proc: this thread only


def polite_barrier(comm) -> None:
    """A barrier that sleeps while it waits instead of spinning.

    Open MPI's blocking calls poll the network at full speed. A rank that spins while
    rank 0 writes the database, or while two other ranks run a kernel, uses up its CPU
    share, and the Linux scheduler then runs it late (in multiples of its 4 ms tick) when
    it next has to answer a message: that showed up as 4-48 ms roundtrips on a loaded
    2-core machine. Ranks that wait here sleep, so they are ready when the timed part starts.
    """
    _wait(comm.Ibarrier())


def _abort(ctx: Context, message: str, exc: BaseException | None = None) -> None:
    sys.stderr.write(f"commodel: error: rank {ctx.rank} ({ctx.hosts[ctx.rank]}): {message}\n")
    if exc is not None and os.environ.get("COMMODEL_DEBUG"):
        traceback.print_exception(type(exc), exc, exc.__traceback__)
    sys.stderr.flush()
    ctx.comm.Abort(2)


CTL_TAG = 0
POLL_S = 0.0002


def _wait(req) -> None:
    while not req.Test():
        time.sleep(POLL_S)


def _post(ctl, obj: Any, dest: int) -> tuple[Any, bytes]:
    """Start sending ``obj`` (pickled, as bytes) to ``dest``; the request and its buffer,
    which must live until the request completes."""
    from mpi4py import MPI

    data = pickle.dumps(obj)
    return ctl.Isend([data, MPI.BYTE], dest=dest, tag=CTL_TAG), data


def _take(ctl, source: int) -> tuple[bool, Any]:
    """(True, the object) where a message from ``source`` has arrived, else (False, None).
    Probed, sized and received as bytes: mpi4py's receive of a pickled object goes through
    a matched probe, which Open MPI 4.1.4 failed (MPI_ERR_OTHER) under an MCA parameter
    file in tests/test_measure_collective.py."""
    from mpi4py import MPI

    status = MPI.Status()
    if not ctl.Iprobe(source=source, tag=CTL_TAG, status=status):
        return False, None
    buf = bytearray(status.Get_count(MPI.BYTE))
    ctl.Recv([buf, MPI.BYTE], source=source, tag=CTL_TAG)
    return True, pickle.loads(buf)


def polite_gather(ctl, obj: Any, root: int = 0) -> list[Any] | None:
    """``ctl.gather(obj, root)`` by messages that each side waits for asleep (as
    :func:`polite_barrier` does): the root takes each rank's object as it arrives."""
    rank, size = ctl.Get_rank(), ctl.Get_size()
    if rank != root:
        req, _data = _post(ctl, obj, root)
        _wait(req)
        return None
    out: list[Any] = [None] * size
    out[root] = obj
    pending = [r for r in range(size) if r != root]
    while pending:
        for r in list(pending):
            got, value = _take(ctl, r)
            if got:
                out[r] = value
                pending.remove(r)
        if pending:
            time.sleep(POLL_S)
    return out


def polite_bcast(ctl, obj: Any, root: int = 0) -> Any:
    """``ctl.bcast(obj, root)`` by messages from the root that each rank waits for
    asleep."""
    rank, size = ctl.Get_rank(), ctl.Get_size()
    if rank == root:
        sent = [_post(ctl, obj, r) for r in range(size) if r != root]
        for req, _data in sent:
            _wait(req)
        return obj
    while True:
        got, value = _take(ctl, root)
        if got:
            return value
        time.sleep(POLL_S)


def sync_start(comm) -> None:
    """Start a timed repetition together: a sleeping barrier until every rank has arrived,
    then MPI_Barrier, which then returns on all ranks at nearly the same time without
    ranks spinning (and being descheduled) while a late one is still on its way."""
    polite_barrier(comm)
    comm.Barrier()


def _worker_loop(ctx: Context) -> int:
    while True:
        cmd = polite_bcast(ctx.ctl, None)
        if cmd[0] == "stop":
            return int(cmd[1])
        _, kernel_name, params = cmd
        try:
            _execute(ctx, kernel_name, params)
        except _Stop:
            continue  # rank 0 reports and then broadcasts stop


# --- campaigns -------------------------------------------------------------------------------


def _send_stop(ctl, code: int) -> None:
    polite_bcast(ctl, ("stop", code))


def mpi_identity(MPI) -> tuple[str, str]:
    text = MPI.Get_library_version().replace("\x00", "")
    library = (text.strip().splitlines() or ["unknown"])[0].strip()
    major, minor = MPI.Get_version()
    return library, f"{major}.{minor}"


_CONTROL: dict[Any, Any] = {}


def control_comm(comm) -> Any:
    """The duplicate of ``comm`` that carries the controller's messages (commands, errors,
    outputs), apart from the kernels' traffic: made once per process (collectively, as
    every rank runs the same campaigns in the same order) and kept for later campaigns."""
    key = comm.py2f()
    if key not in _CONTROL:
        _CONTROL[key] = comm.Dup()
    return _CONTROL[key]


def run_campaign(
    benchmark: str,
    options: dict[str, Any],
    db_path: str | None,
    procedure: Callable[[Context], Any],
    *,
    min_ranks: int = 2,
    resume: bool = False,
    resume_id: int | None = None,
    command: str | None = None,
    progress: bool = True,
    comm: Any = None,
) -> tuple[int, Any]:
    """Run ``procedure`` on rank 0 with every other rank serving its kernels.

    Returns ``(exit_code, result)``: rank 0 gets the procedure's result, other ranks None.
    Raises :class:`CommodelError` on rank 0 for user errors (the other ranks return 2).
    """
    from ..db import ResultsDB, options_json

    MPI = import_mpi()
    comm = comm if comm is not None else MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    hosts = comm.allgather(MPI.Get_processor_name())
    ctx = Context(
        MPI=MPI,
        comm=comm,
        rank=rank,
        size=size,
        hosts=hosts,
        benchmark=benchmark,
        ctl=control_comm(comm),
    )
    if rank != 0:
        return _worker_loop(ctx), None

    db = None
    try:
        if size < min_ranks:
            raise CommodelError(
                f"measure {benchmark} needs at least {min_ranks} MPI ranks, got {size}; "
                f"run it under 'mpirun -n {min_ranks} ...'"
            )
        if db_path is None:
            raise CommodelError(f"measure {benchmark}: --db FILE is required")
        db = ResultsDB(db_path)
        library, version = mpi_identity(MPI)
        if resume:
            camp = db.resumable(benchmark, resume_id)
            if options_json(camp.options) != options_json(options):
                diffs = sorted(
                    k
                    for k in set(camp.options) | set(options)
                    if camp.options.get(k) != options.get(k)
                )
                detail = ", ".join(
                    f"{k}: stored {camp.options.get(k)!r}, given {options.get(k)!r}" for k in diffs
                )
                raise CommodelError(
                    f"{db_path}: campaign {camp.id} was measured with other options ({detail}); "
                    "resume it with the same options"
                )
            if camp.ranks != size:
                raise CommodelError(
                    f"{db_path}: campaign {camp.id} ran on {camp.ranks} ranks, this run has {size}"
                )
            ctx.campaign = camp.id
            ctx.run = db.restart_campaign(camp.id)
            ctx.stored = db.stored_steps(camp.id)
        else:
            ctx.campaign = db.create_campaign(
                benchmark, command or " ".join(sys.argv), options, hosts, library, version
            )
        ctx.db = db
        ctx.progress = Progress(1, benchmark, enabled=progress)
    except BaseException:
        _send_stop(ctx.ctl, 2)
        if db is not None:
            db.close()
        raise

    try:
        result = procedure(ctx)
    except BaseException:
        try:
            db.set_status(ctx.campaign, "failed")
        finally:
            _send_stop(ctx.ctl, 2)
            db.close()
            if ctx.progress is not None:
                ctx.progress.close()
        raise
    ctx.progress.close()
    db.set_status(ctx.campaign, "complete")
    db.close()
    _send_stop(ctx.ctl, 0)
    return 0, result
