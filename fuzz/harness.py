"""Run the fuzz targets of :mod:`targets` in-process, with the time and memory limits.

    python fuzz/harness.py run TARGET... [--count N | --seconds S] [--start K] [--workers W]
                               [--out DIR] [--limit-s 5] [--limit-gib 4]
    python fuzz/harness.py show TARGET SEED     # print input SEED of TARGET
    python fuzz/harness.py check TARGET SEED    # run it here, with its traceback
    python fuzz/harness.py list                 # the targets

Input number SEED of a target is always the same (it is drawn from ``random.Random`` seeded
with the target's name and SEED), so a finding is its seed. Workers are child processes
under ``RLIMIT_AS`` of ``--limit-gib`` GiB, each running a range of seeds one after the other
in one interpreter (no process per input). Before each input a worker writes its seed to
the supervisor; an input that has used ``--limit-s`` seconds of CPU (every thread; the
machine may be shared, so CPU, not wall time, is the measure) without an answer, or has
been blocked for 12 times that, is a *hang* (the worker is killed and restarted after it),
an answer that took more CPU than that is *slow*, a worker that dies on an input (a Rust abort, the memory limit) is a *crash*, and
an exception other than a CommodelError (or a CLI exit other than 0 and 2) is a *failure*.
Each finding is a line of ``DIR/findings.jsonl``; the run prints its figures and exits 1 if
there was any.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import selectors
import signal
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent


def worker(target: str, start: int, stop: int, step: int) -> int:
    """Run seeds start, start + step, ... < stop; report on stdout, one line per event:
    ``B seed`` before an input, ``E seed outcome ms [detail]`` after it."""
    sys.path.insert(0, str(HERE))
    import targets

    from commodel.errors import CommodelError

    out = sys.stdout
    out.write("R\n")
    out.flush()
    for seed in range(start, stop, step):
        out.write(f"B {seed}\n")
        out.flush()
        began = time.process_time()  # CPU of every thread: the machine may be shared
        detail = ""
        try:
            value = targets.generate(target, seed)
            targets.check(target, value)
            outcome = "ok"
        except CommodelError:
            outcome = "clean"
        except BaseException as exc:  # noqa: BLE001 - everything else is the finding
            if isinstance(exc, KeyboardInterrupt):
                raise
            where = traceback.extract_tb(exc.__traceback__)[-1]
            outcome = "fail"
            detail = f"{type(exc).__name__}: {str(exc)[:300]} at {where.filename}:{where.lineno}"
        ms = (time.process_time() - began) * 1000
        out.write(f"E {seed} {outcome} {ms:.1f} {json.dumps(detail)}\n")
        out.flush()
    return 0


# A worker blocked (not computing) this many times the limit is hung too.
WALL_FACTOR = 12
_TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system, every thread) of process ``pid`` so far."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICK


def _limit(gib: float) -> None:
    limit = int(gib * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    # a worker killed on a timeout leaves no core file behind
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


@dataclass
class Figures:
    target: str
    inputs: int = 0
    ok: int = 0
    clean: int = 0
    findings: list[dict] = field(default_factory=list)
    slowest_ms: float = 0.0
    slowest_seed: int = -1
    peak_rss_mib: float = 0.0
    seconds: float = 0.0
    cpu_ms: float = 0.0  # the inputs that answered: generating and checking them


class Worker:
    def __init__(self, target: str, start: int, stop: int, step: int, gib: float) -> None:
        self.range = (start, stop, step)
        self.target = target
        self.gib = gib
        self.current: int | None = None
        self.began = 0.0
        self.cpu0 = 0.0
        self.buffer = b""
        self.proc = self._spawn(start)

    def _spawn(self, start: int) -> subprocess.Popen:
        _, stop, step = self.range
        self.next_seed = start
        self.current = None
        self.buffer = b""
        return subprocess.Popen(
            [
                sys.executable,
                str(HERE / "harness.py"),
                "_worker",
                self.target,
                str(start),
                str(stop),
                str(step),
            ],  # fmt: skip
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            preexec_fn=lambda: _limit(self.gib),
        )

    def restart_after(self, seed: int) -> bool:
        """A new process for the seeds after ``seed``; False when none are left."""
        _, stop, step = self.range
        if seed + step >= stop:
            self.proc = None  # type: ignore[assignment]
            return False
        self.proc = self._spawn(seed + step)
        return True


def reap(proc: subprocess.Popen) -> tuple[int, float]:
    """Wait for ``proc``: its status and peak RSS in MiB."""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.stdout is not None:
        proc.stdout.close()
    return proc.returncode, usage.ru_maxrss / 1024


def run(target: str, count: int | None, seconds: float | None, start: int, workers: int,
        limit_s: float, gib: float, findings_path: Path) -> Figures:  # fmt: skip
    """Run ``target`` (see :func:`_run`); the workers' scratch files live in one folder,
    removed at the end whatever the workers did (a killed worker cleans nothing up)."""
    import shutil
    import tempfile

    import targets

    base = tempfile.mkdtemp(prefix="commodel-fuzz-", dir=targets.SCRATCH_DIR)
    os.environ[targets.WORK_ENV] = base
    try:
        return _run(target, count, seconds, start, workers, limit_s, gib, findings_path)
    finally:
        del os.environ[targets.WORK_ENV]
        shutil.rmtree(base, ignore_errors=True)


def _run(target: str, count: int | None, seconds: float | None, start: int, workers: int,
         limit_s: float, gib: float, findings_path: Path) -> Figures:  # fmt: skip
    figures = Figures(target)
    stop = start + count if count is not None else 2**62
    deadline = time.monotonic() + seconds if seconds is not None else None
    began = time.monotonic()
    pool = [
        Worker(target, start + k, stop, workers, gib) for k in range(min(workers, stop - start))
    ]
    selector = selectors.DefaultSelector()
    for w in pool:
        selector.register(w.proc.stdout, selectors.EVENT_READ, w)
    live = len(pool)

    def finding(kind: str, seed: int, detail: str, ms: float = 0.0) -> None:
        record = {
            "target": target,
            "seed": seed,
            "kind": kind,
            "detail": detail,
            "ms": round(ms, 1),
        }
        figures.findings.append(record)
        with findings_path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")

    def replace(w: Worker, kind: str, detail: str) -> None:
        nonlocal live
        selector.unregister(w.proc.stdout)
        if w.proc.poll() is None:
            w.proc.kill()
        code, rss = reap(w.proc)
        figures.peak_rss_mib = max(figures.peak_rss_mib, rss)
        if w.current is not None:
            figures.inputs += 1
            finding(
                kind,
                w.current,
                detail or f"worker ended with {code}",
                (time.monotonic() - w.began) * 1000,
            )
            if w.restart_after(w.current):
                selector.register(w.proc.stdout, selectors.EVENT_READ, w)
                return
        live -= 1

    while live:
        if deadline is not None and time.monotonic() > deadline:
            for w in pool:
                if w.proc is not None and w.proc.poll() is None:
                    w.proc.kill()
                    _, rss = reap(w.proc)
                    figures.peak_rss_mib = max(figures.peak_rss_mib, rss)
            break
        for key, _ in selector.select(timeout=0.5):
            w = key.data
            chunk = os.read(w.proc.stdout.fileno(), 65536)
            if not chunk:  # the worker ended: done, or died on an input
                if w.current is not None:
                    replace(w, "crash", "")
                else:
                    selector.unregister(w.proc.stdout)
                    _, rss = reap(w.proc)
                    figures.peak_rss_mib = max(figures.peak_rss_mib, rss)
                    live -= 1
                continue
            w.buffer += chunk
            *lines, w.buffer = w.buffer.split(b"\n")
            for line in lines:
                parts = line.decode().split(" ", 4)
                if parts[0] == "B":
                    w.current, w.began = int(parts[1]), time.monotonic()
                    w.cpu0 = cpu_seconds(w.proc.pid)
                elif parts[0] == "E":
                    seed, outcome, ms = int(parts[1]), parts[2], float(parts[3])
                    w.current = None
                    figures.inputs += 1
                    figures.cpu_ms += ms
                    if ms > figures.slowest_ms:
                        figures.slowest_ms, figures.slowest_seed = ms, seed
                    if outcome == "ok":
                        figures.ok += 1
                    elif outcome == "clean":
                        figures.clean += 1
                    else:
                        finding("failure", seed, json.loads(parts[4]), ms)
                    if ms > limit_s * 1000:
                        finding("slow", seed, f"answered in {ms / 1000:.1f} s", ms)
        now = time.monotonic()
        for w in pool:
            if w.proc is None or w.current is None:
                continue
            if cpu_seconds(w.proc.pid) - w.cpu0 > limit_s:
                replace(w, "hang", f"no answer within {limit_s:g} s of CPU")
            elif now - w.began > WALL_FACTOR * limit_s:
                replace(w, "hang", f"no answer within {WALL_FACTOR * limit_s:g} s (blocked)")
    figures.seconds = time.monotonic() - began
    return figures


def report(f: Figures) -> str:
    kinds: dict[str, int] = {}
    for item in f.findings:
        kinds[item["kind"]] = kinds.get(item["kind"], 0) + 1
    found = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "no findings"
    rate = f.inputs / f.seconds if f.seconds else 0.0
    return (
        f"fuzz: {f.target}: {f.inputs} inputs in {f.seconds:.0f} s ({rate:.0f}/s): {f.ok} ran, "
        f"{f.clean} refused cleanly; {found}; slowest {f.slowest_ms / 1000:.2f} s (seed "
        f"{f.slowest_seed}); peak worker RSS {f.peak_rss_mib:.0f} MiB; "
        f"{f.cpu_ms / max(f.inputs, 1):.2f} ms of CPU an input"
    )


def main(argv: list[str]) -> int:
    if argv and argv[0] == "_worker":
        return worker(argv[1], int(argv[2]), int(argv[3]), int(argv[4]))
    sys.path.insert(0, str(HERE))
    import targets

    parser = argparse.ArgumentParser(prog="fuzz/harness.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("run")
    p.add_argument("targets", nargs="+", choices=[*targets.TARGETS, "all"])
    p.add_argument("--count", type=int, help="inputs per target")
    p.add_argument("--seconds", type=float, help="seconds per target (instead of --count)")
    p.add_argument("--start", type=int, default=0, help="first seed (default 0)")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--out", type=Path, default=HERE / "artifacts")
    p.add_argument("--limit-s", type=float, default=5.0, help="seconds an input may take (5)")
    p.add_argument("--limit-gib", type=float, default=4.0, help="address space of a worker (4)")
    for name in ("show", "check"):
        q = sub.add_parser(name)
        q.add_argument("target", choices=list(targets.TARGETS))
        q.add_argument("seed", type=int)
    sub.add_parser("list")
    args = parser.parse_args(argv)
    if args.command == "list":
        print("\n".join(targets.TARGETS))
        return 0
    if args.command == "show":
        value = targets.generate(args.target, args.seed)
        if isinstance(value, bytes):
            sys.stdout.buffer.write(value)
        else:
            print(json.dumps(value, indent=1))
        return 0
    if args.command == "check":
        targets.check(args.target, targets.generate(args.target, args.seed))
        print("ok")
        return 0
    if (args.count is None) == (args.seconds is None):
        parser.error("give --count or --seconds")
    names = list(targets.TARGETS) if "all" in args.targets else args.targets
    args.out.mkdir(parents=True, exist_ok=True)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    failed = False
    for name in names:
        figures = run(name, args.count, args.seconds, args.start, args.workers, args.limit_s,
                      args.limit_gib, args.out / "findings.jsonl")  # fmt: skip
        print(report(figures), flush=True)
        for item in figures.findings[:5]:
            print(f"  {item['kind']} seed {item['seed']}: {item['detail']}", flush=True)
        failed |= bool(figures.findings)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
