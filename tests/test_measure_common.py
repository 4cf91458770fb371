"""The SPMD harness: errors on any rank end every rank with exit code 2, reported once;
the progress bar; the message when mpi4py is missing."""

from __future__ import annotations

import io
import sys
import textwrap

import pytest

from commodel.errors import CommodelError
from commodel.measure import common
from mpirun import needs_mpi, run

SCRIPT = textwrap.dedent(
    """
    import sys
    from commodel.errors import CommodelError
    from commodel.measure.common import kernel, run_campaign

    WHERE = sys.argv[2]

    def prepare(ctx, p):
        if WHERE == "prepare" and ctx.rank == 1:
            raise CommodelError("cannot allocate the buffer (test)")
        return p

    @kernel("test.fail", prepare)
    def _run(ctx, p):
        if WHERE == "run" and ctx.rank == 1:
            raise RuntimeError("lost the peer (test)")
        ctx.comm.Barrier()
        return ctx.rank

    def procedure(ctx):
        res = ctx.step("k", "test.fail", {}, rows=lambda outs: [
            {"phase": "t", "quantity": "q", "value_s": float(v)} for v in outs])
        return res.per_rank

    try:
        code, result = run_campaign("test", {"where": WHERE}, sys.argv[1], procedure, progress=False)
    except CommodelError as exc:
        print(f"commodel: error: {exc}", file=sys.stderr)
        sys.exit(2)
    if result is not None:
        print("result", result)
    sys.exit(code)
    """
)


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "harness.py"
    path.write_text(SCRIPT)
    return path


@pytest.mark.mpi
@needs_mpi
def test_success_gathers_every_rank(script, tmp_path):
    res = run(3, str(script), str(tmp_path / "r.duckdb"), "none", module=False)
    assert res.returncode == 0, res.stderr
    assert "result [0, 1, 2]" in res.stdout


@pytest.mark.mpi
@needs_mpi
def test_prepare_error_on_rank_1_is_reported_once_by_rank_0(script, tmp_path):
    res = run(3, str(script), str(tmp_path / "r.duckdb"), "prepare", module=False)
    assert res.returncode == 2
    lines = [line for line in res.stderr.splitlines() if "commodel: error" in line]
    assert len(lines) == 1, res.stderr
    assert "test.fail: rank 1 (" in lines[0] and "cannot allocate the buffer (test)" in lines[0]
    import duckdb

    with duckdb.connect(str(tmp_path / "r.duckdb"), read_only=True) as con:
        assert con.execute("SELECT status FROM campaigns").fetchone() == ("failed",)


@pytest.mark.mpi
@needs_mpi
def test_error_inside_a_kernel_aborts_every_rank_with_2(script, tmp_path):
    res = run(3, str(script), str(tmp_path / "r.duckdb"), "run", module=False)
    assert res.returncode == 2
    assert "commodel: error: rank 1 (" in res.stderr
    assert "RuntimeError: lost the peer (test)" in res.stderr
    assert "Traceback" not in res.stderr


def test_missing_mpi4py_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    with pytest.raises(CommodelError) as err:
        common.import_mpi()
    msg = str(err.value)
    assert "pip install mpi4py" in msg and "apt-get install libopenmpi-dev openmpi-bin" in msg


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_and_eta():
    stream = _Tty()
    p = common.Progress(10, "plogp", stream=stream)
    p.start -= 20.0  # 20 s elapsed
    p.done = 4
    line = p.line(now=p.start + 20.0)
    assert "40.0%" in line and "ETA   00:30" in line and line.startswith("[##########")
    p.advance(6, "last")
    p.close()
    assert stream.getvalue().endswith("\n")
    quiet = io.StringIO()  # not a terminal: nothing is written
    q = common.Progress(3, "x", stream=quiet)
    q.advance(1)
    q.close()
    assert quiet.getvalue() == ""
    assert common.format_eta(3725) == "1:02:05"


# --- ranks that sit a kernel out leave real-time scheduling ----------------------------------
# Setting SCHED_RR needs root (or CAP_SYS_NICE); CI runs as root. Elsewhere these skip.

REALTIME = textwrap.dedent(
    """
    import os, threading, time
    from commodel.measure.common import out_of_realtime

    def policies():
        return sorted({os.sched_getscheduler(int(t)) for t in os.listdir("/proc/self/task")})

    stop = threading.Event()
    short = threading.Thread(target=lambda: time.sleep(0.2))
    long = threading.Thread(target=stop.wait)
    short.start(); long.start()
    try:
        for t in os.listdir("/proc/self/task"):
            os.sched_setscheduler(int(t), os.SCHED_RR, os.sched_param(1))
    except PermissionError:
        print("no-rt"); stop.set(); raise SystemExit(0)
    before = policies()
    with out_of_realtime():
        inside = policies()
        short.join()  # a thread that ends inside the block
    after = policies()
    stop.set(); long.join()
    print(before == [os.SCHED_RR], inside == [os.SCHED_OTHER], after == [os.SCHED_RR])
    """
)


def test_out_of_realtime_drops_and_restores_every_thread(tmp_path):
    import subprocess

    path = tmp_path / "rt.py"
    path.write_text(REALTIME)
    res = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    if res.stdout.strip() == "no-rt":
        pytest.skip("SCHED_RR is not permitted here (needs root)")
    assert res.stdout.split() == ["True", "True", "True"]


def test_out_of_realtime_leaves_other_policies_alone():
    import os

    before = os.sched_getscheduler(0)
    with common.out_of_realtime():
        inside = os.sched_getscheduler(0)
    assert before == inside == os.sched_getscheduler(0) == os.SCHED_OTHER


SITS_OUT = textwrap.dedent(
    """
    import os, sys, time
    os.environ["OMPI_MCA_mpi_yield_when_idle"] = "1"  # as `cluster mpirun` runs ranks
    from commodel.measure.common import kernel, run_campaign

    def policies(pid):
        return sorted({os.sched_getscheduler(int(t)) for t in os.listdir(f"/proc/{pid}/task")})

    @kernel("test.realtime")
    def _realtime(ctx, p):
        try:
            for t in os.listdir("/proc/self/task"):
                os.sched_setscheduler(int(t), os.SCHED_RR, os.sched_param(1))
        except PermissionError:
            return None
        return os.getpid()

    @kernel("test.policies")
    def _policies(ctx, p):
        return policies(os.getpid())

    @kernel("test.watch", sits_out=lambda ctx, state: ctx.rank == 2)
    def _watch(ctx, p):
        # rank 0 watches rank 2 leave real-time scheduling while this kernel runs
        if ctx.rank != 0:
            return None
        end = time.monotonic() + 20
        while time.monotonic() < end:
            if policies(p["pid"]) == [os.SCHED_OTHER]:
                return True
            time.sleep(0.001)
        return False

    def rows(outs):
        return [{"phase": "t", "quantity": "q", "value_s": 0.0}]

    def procedure(ctx):
        pids = ctx.step("rt", "test.realtime", {}, rows=rows).per_rank
        if None in pids:
            return "no-rt"
        before = ctx.step("p1", "test.policies", {}, rows=rows).per_rank
        seen = ctx.step("w", "test.watch", {"pid": pids[2]}, rows=rows).per_rank[0]
        after = ctx.step("p2", "test.policies", {}, rows=rows).per_rank
        rr = [[os.SCHED_RR]] * 3
        return f"{before == rr} {seen} {after == rr}"

    code, result = run_campaign("test", {}, sys.argv[1], procedure, progress=False)
    if result is not None:
        print("result", result)
    sys.exit(code)
    """
)


@pytest.mark.mpi
@needs_mpi
def test_a_rank_that_sits_a_kernel_out_waits_outside_realtime(tmp_path):
    path = tmp_path / "sits_out.py"
    path.write_text(SITS_OUT)
    res = run(3, str(path), str(tmp_path / "r.duckdb"), module=False)
    assert res.returncode == 0, res.stderr
    if "result no-rt" in res.stdout:
        pytest.skip("SCHED_RR is not permitted here (needs root)")
    # real-time before, rank 2 seen under SCHED_OTHER during the kernel, real-time after
    assert "result True True True" in res.stdout, res.stdout + res.stderr
