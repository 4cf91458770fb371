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
