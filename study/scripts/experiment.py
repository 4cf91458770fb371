#!/usr/bin/env python3
"""The validation study (``make experiment``): see docs/validation.md and study/.

For every cluster spec: bring the emulated cluster up, calibrate it (measure plogp, tree;
fit), run (a) Alltoall A vs B, (b) many-to-one and (c) random patterns, write CSV + PNG +
an automatic summary under ``study/<date>-<spec>/``, and bring the cluster down
whatever happens. Needs root. Sizes, repetitions and trials are options, so that a reduced
run can be made on a small machine; the options used are written next to the results.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)

import study  # noqa: E402  (study/scripts/study.py, beside this file)

from commodel.errors import CommodelError  # noqa: E402
from commodel.units import parse_size  # noqa: E402
from commodel.validate.alltoall_measured import measure_alltoall_ab  # noqa: E402
from commodel.validate.calibration import calibrate, cluster_up, spec_info  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))


def sizes_arg(text: str) -> list[int]:
    return [parse_size(x) for x in text.split(",") if x]


def ints_arg(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x]


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--specs",
        default="examples/clusters/two-rack-8.yaml,examples/clusters/two-rack-16.yaml",
        help="comma-separated cluster specs",
    )
    ap.add_argument("--parts", default="a,b,c", help="which parts: a, b, c")
    ap.add_argument("--out", default=os.path.join(ROOT, "study"))
    ap.add_argument("--work", default=None, help="scratch directory (databases, schedules)")
    ap.add_argument(
        "--a-sizes", type=sizes_arg, default=sizes_arg("1KiB,4KiB,16KiB,64KiB,256KiB,1MiB")
    )
    ap.add_argument("--a-reps", type=int, default=20, help="measure pattern --max-reps, part a")
    ap.add_argument("--b-sizes", type=sizes_arg, default=sizes_arg("4KiB,16KiB,32KiB,64KiB,128KiB"))
    ap.add_argument(
        "--b-n", type=ints_arg, default=None, help="many-to-one n (root included; default 4..P)"
    )
    ap.add_argument("--b-reps", type=int, default=30, help="repetitions per (n, M), part b (>= 30)")
    ap.add_argument("--c-degrees", type=ints_arg, default=[1, 2, 3])
    ap.add_argument("--c-trials", type=int, default=20, help="random schedules per degree")
    ap.add_argument("--c-size", type=parse_size, default=parse_size("256KiB"))
    ap.add_argument("--c-reps", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--calibration-max-size", type=parse_size, default=parse_size("1MiB"))
    args = ap.parse_args()
    if os.geteuid() != 0:
        print(
            "experiment.py: the emulated cluster needs root (see docs/cluster.md)", file=sys.stderr
        )
        return 2
    parts = set(args.parts.split(","))
    today = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d")
    for spec in args.specs.split(","):
        spec_path = spec if os.path.isabs(spec) else os.path.join(ROOT, spec)
        info = spec_info(spec_path)
        outdir = os.path.join(args.out, f"{today}-{info['name']}")
        work = os.path.join(args.work or os.path.join("/tmp", "commodel-experiment"), info["name"])
        os.makedirs(outdir, exist_ok=True)
        os.makedirs(work, exist_ok=True)
        meta = {
            "spec": os.path.relpath(spec_path, ROOT),
            "machine": study.machine_description(),
            "options": {k: v for k, v in vars(args).items() if k not in ("out", "work")},
        }
        t0 = time.time()
        name = "cmx" + study.slug(info["name"])[:10]
        try:
            with cluster_up(spec_path, name):
                platform, cal = calibrate(name, work, args.calibration_max_size)
                study.copy_platform(cal, outdir)
                P = info["hosts"]
                if "a" in parts:
                    measure_alltoall_ab(name, platform, P, args.a_sizes, args.a_reps, work, outdir)
                if "c" in parts:
                    study.part_random(
                        name, platform, P, args.c_degrees, args.c_trials, args.c_size,
                        args.c_reps, args.seed, work, outdir,
                    )  # fmt: skip
                if "b" in parts:
                    study.part_many_to_one(
                        name, platform, P, args.b_sizes, args.b_reps, work, outdir, ns=args.b_n
                    )
                    study.many_to_one_rto_table(
                        os.path.join(work, "many-to-one.duckdb"), info["rto_min_s"], outdir
                    )
        except CommodelError as exc:
            print(f"experiment.py: {spec}: {exc}", file=sys.stderr)
            meta["error"] = str(exc)
        meta["elapsed_s"] = round(time.time() - t0, 1)
        meta["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
        with open(os.path.join(outdir, "run.json"), "w", encoding="utf-8") as fh:
            json.dump(meta, fh, indent=1)
        study.write_summary(outdir, f"Validation on {info['name']}")
        print(f"{spec}: results in {outdir} ({meta['elapsed_s']} s)", file=sys.stderr)
        if "error" in meta:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
