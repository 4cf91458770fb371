"""Benchmark of the file path: `commodel predict FILE.goal` end to end, beside LogGOPSim.

For each case (64 KiB all-to-alls unless ``--patterns`` and ``--size`` say otherwise), the
GOAL file is written once with `commodel schedule -o` (its peak memory printed against the
200 MB target), then, ``--reps`` times, each in its own process under ``/usr/bin/time -v``:

* ours: ``commodel predict FILE.goal --platform loggopsim-default --json``;
* given ``--loggopsim DIR`` (a checkout of spcl/LogGOPSim; built here with -O3 into
  bench-out/loggopsim, never copied into this repository): ``txt2bin`` on the same file,
  then ``LogGOPSim`` on its output with the same parameters (L=5000 o=1500 g=1000 G=8
  O=0 S=65535), and ``commodel predict`` on that binary file too.

It checks that every run predicts the same makespan (in ns), and prints medians of wall
time and peak resident memory, and their ratios to LogGOPSim's txt2bin + LogGOPSim. A
schedule that sends 0 bytes in all (a barrier) is the exception docs/models.md documents:
LogGOPSim's receive of a 0-byte message ends G earlier; there ours must agree with each
other and LogGOPSim's makespan is printed beside them.
Without ``--loggopsim`` it says so and prints our figures alone.

    python benches/goal_path.py                      # pairwise and post-all, 1024 ranks
    python benches/goal_path.py --ranks 1024 4096 --loggopsim ~/src/LogGOPSim
    python benches/goal_path.py --ranks 65536 --size 1KiB --patterns bcast-binomial \
        barrier-dissemination                        # issue 42's scale cases

``--loggopsim`` defaults to ``$COMMODEL_LOGGOPSIM_SRC`` (how ``make bench`` is given one).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMODEL = [sys.executable, "-m", "commodel"]
PLATFORM = "loggopsim-default"
LOGGOPS_ARGS = ["-L", "5000", "-o", "1500", "-g", "1000", "-G", "8", "-O", "0", "-S", "65535"]
PATTERNS = ["alltoall-pairwise", "alltoall-xor-post-all"]
# Peak memory `commodel schedule -o` must stay under (it writes rank by rank).
SCHEDULE_TARGET_MB = 200


def timed(cmd: list[str]) -> tuple[str, float, float]:
    """Run ``cmd`` under /usr/bin/time -v: (stdout, wall seconds, peak RSS in MiB)."""
    run = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{run.stderr[-2000:]}")
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", run.stderr)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", run.stderr)
    if not wall or not rss:
        raise SystemExit(f"no /usr/bin/time -v figures for {' '.join(cmd)}")
    h, m, s = wall.groups()
    seconds = int(h or 0) * 3600 + int(m) * 60 + float(s)
    return run.stdout, seconds, int(rss.group(1)) / 1024


def build_loggopsim(src: Path, out: Path) -> tuple[Path, Path]:
    """txt2bin and LogGOPSim from ``src`` built with -O3 into ``out``."""
    sim = src / "src" / "LogGOPSim"
    missing = [t for t in ("re2c", "gengetopt", "g++") if shutil.which(t) is None]
    if missing:
        raise SystemExit(f"building LogGOPSim needs {', '.join(missing)}, not installed")
    out.mkdir(parents=True, exist_ok=True)
    steps = [
        ["re2c", "-o", "txt2bin.cpp", str(sim / "txt2bin.re")],
        ["gengetopt", "-F", "txt2bin_cmdline", "-i", str(sim / "txt2bin_cmdline.ggo")],
        ["gengetopt", "-F", "loggopsim_cmdline", "-i", str(sim / "loggopsim_cmdline.ggo")],
        [
            "g++",
            "-O3",
            "-std=c++11",
            f"-I{sim}",
            "-I.",
            "txt2bin.cpp",
            "txt2bin_cmdline.c",
            "-o",
            "txt2bin",
        ],
        [
            "g++",
            "-O3",
            "-std=c++11",
            f"-I{sim}",
            "-I.",
            str(sim / "LogGOPSim.cpp"),
            "loggopsim_cmdline.c",
            "-lcgraph",
            "-o",
            "LogGOPSim",
        ],
    ]
    for cmd in steps:
        run = subprocess.run(cmd, cwd=out, capture_output=True, text=True)
        if run.returncode != 0:
            raise SystemExit(f"building LogGOPSim failed: {' '.join(cmd)}\n{run.stderr[-2000:]}")
    return out / "txt2bin", out / "LogGOPSim"


def ours(path: Path) -> tuple[int, float, float]:
    """(makespan in ns, wall s, peak MiB) of ``commodel predict FILE`` (its plain output;
    ``--json`` would also record every message). The makespan, exact in ns, comes from
    the same prediction through the Python API in another process."""
    _, wall, rss = timed([*COMMODEL, "predict", str(path), "--platform", PLATFORM])
    exact = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import sys, commodel; print(commodel.predict(sys.argv[1], {PLATFORM!r}).makespan_ps)",
            str(path),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(exact.stdout) // 1000, wall, rss


def theirs(
    txt2bin: Path, sim: Path, path: Path, binary: Path
) -> tuple[int, float, float, float, float]:
    _, conv_wall, conv_rss = timed([str(txt2bin), "-i", str(path), "-o", str(binary)])
    out, wall, rss = timed([str(sim), "-f", str(binary), "-b", *LOGGOPS_ARGS])
    found = re.search(r"Maximum finishing time at host \d+: (\d+)", out)
    if not found:
        raise SystemExit(f"no finishing time in LogGOPSim's output:\n{out[-2000:]}")
    return int(found.group(1)), conv_wall, conv_rss, wall, rss


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, nargs="+", default=[1024])
    ap.add_argument("--patterns", nargs="+", default=PATTERNS, help="collective names")
    ap.add_argument("--size", default="64KiB", help="message size of each schedule (default 64KiB)")
    ap.add_argument("--reps", type=int, default=3)
    env_dir = os.environ.get("COMMODEL_LOGGOPSIM_SRC")
    ap.add_argument(
        "--loggopsim",
        type=Path,
        default=Path(env_dir) if env_dir else None,
        help="a checkout of spcl/LogGOPSim (default: $COMMODEL_LOGGOPSIM_SRC if set)",
    )
    args = ap.parse_args()
    tools = None
    if args.loggopsim:
        tools = build_loggopsim(args.loggopsim.resolve(), ROOT / "bench-out" / "loggopsim")
    else:
        print("no --loggopsim DIR given: our figures alone, no comparison with LogGOPSim")
    med = statistics.median
    with tempfile.TemporaryDirectory(prefix="commodel-bench-") as tmp:
        for ranks in args.ranks:
            for pattern in args.patterns:
                goal = Path(tmp) / f"{pattern}-{ranks}.goal"
                wrote, _, schedule_mib = timed(
                    [
                        *COMMODEL,
                        "schedule",
                        pattern,
                        "--ranks",
                        str(ranks),
                        "--size",
                        args.size,
                        "-o",
                        str(goal),
                    ]
                )
                size_mb = goal.stat().st_size / 1e6
                schedule_mb = schedule_mib * 2**20 / 1e6
                print(
                    f"{pattern} {ranks}: commodel schedule -o peak {schedule_mib:.0f} MiB "
                    f"({schedule_mb:.0f} MB; target under {SCHEDULE_TARGET_MB} MB: "
                    f"{'met' if schedule_mb < SCHEDULE_TARGET_MB else 'NOT met'})",
                    flush=True,
                )
                runs = [ours(goal) for _ in range(args.reps)]
                times = {r[0] for r in runs}
                line = (
                    f"{pattern} {ranks} ({size_mb:.0f} MB of text): commodel predict "
                    f"{med(r[1] for r in runs):.2f} s, {med(r[2] for r in runs):.0f} MiB"
                )
                if tools:
                    binary = Path(tmp) / f"{pattern}-{ranks}.bin"
                    sims = [theirs(*tools, goal, binary) for _ in range(args.reps)]
                    on_bin = [ours(binary) for _ in range(args.reps)]
                    times |= {s[0] for s in sims} | {r[0] for r in on_bin}
                    conv_w, conv_m = med(s[1] for s in sims), med(s[2] for s in sims)
                    sim_w, sim_m = med(s[3] for s in sims), med(s[4] for s in sims)
                    our_w, our_m = med(r[1] for r in runs), med(r[2] for r in runs)
                    bin_w, bin_m = med(r[1] for r in on_bin), med(r[2] for r in on_bin)
                    line += (
                        f"; txt2bin {conv_w:.2f} s, {conv_m:.0f} MiB + LogGOPSim {sim_w:.2f} s, "
                        f"{sim_m:.0f} MiB; ratios (ours / theirs): time "
                        f"{our_w / (conv_w + sim_w):.2f}, memory {our_m / max(conv_m, sim_m):.2f}; "
                        f"on the binary: commodel {bin_w:.2f} s, {bin_m:.0f} MiB vs LogGOPSim "
                        f"{sim_w:.2f} s, {sim_m:.0f} MiB ({bin_w / sim_w:.2f}, {bin_m / sim_m:.2f})"
                    )
                if tools and " 0 B sent" in wrote:
                    # All messages of 0 bytes: LogGOPSim's differs (docs/models.md).
                    lgs = {s[0] for s in sims}
                    times -= lgs
                    line += f"; LogGOPSim's makespan {sorted(lgs)} ns (0-byte messages)"
                if len(times) != 1:
                    print(f"{line}\nMISMATCH: predicted makespans (ns) differ: {sorted(times)}")
                    return 1
                print(f"{line}; makespan {times.pop()} ns", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
