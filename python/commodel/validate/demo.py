"""The cluster demo: the short version of the Alltoall A/B study on a real emulated cluster.

``commodel validate demo`` (or ``commodel demo --cluster``, or ``make demo-cluster``), as
root: bring up the 8-host two-rack cluster, calibrate it (plogp up to 256 KiB, tree), run
Alltoall A and B at 4 KiB, 64 KiB and 256 KiB a few times, print measured against plogp,
plogpt and maxmin, and bring the cluster down again. About two minutes. Without root it
says so and exits with code 2 (the prediction-only ``commodel demo`` needs no root).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import warnings
from typing import Any

from ..errors import CommodelError
from ..units import format_duration

DEMO_SIZES = (4096, 65536, 262144)
DEMO_MODELS = ("plogp", "plogpt", "maxmin")


def default_spec() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    for base in (os.getcwd(), os.path.join(here, "..", "..", "..")):
        path = os.path.join(base, "examples", "clusters", "two-rack-8.yaml")
        if os.path.exists(path):
            return os.path.abspath(path)
    raise CommodelError("cannot find examples/clusters/two-rack-8.yaml; give --spec FILE")


def format_rows(rows: list[dict[str, Any]], models: tuple[str, ...] = DEMO_MODELS) -> str:
    """The demo table: measured A and B per size, each model's prediction, error and pick."""
    head = f"{'size':>8}  {'alg':<3} {'measured':>10} {'TCP RTOs':>8}"
    for m in models:
        head += f"  {m:>16}"
    lines = [head]
    for r in rows:
        for key in ("A", "B"):
            line = (
                f"{r['size_bytes']:>8}  {key:<3} {format_duration(r[f'measured_{key}_s']):>10} "
                f"{'?' if r.get(f'tcp_timeouts_{key}') is None else r[f'tcp_timeouts_{key}']:>8}"
            )
            for m in models:
                t, e = r.get(f"{m}_{key}_s"), r.get(f"{m}_{key}_err")
                cell = "n/a" if t is None else f"{format_duration(t)} {100 * e:+4.0f}%"
                line += f"  {cell:>16}"
            lines.append(line)
        picks = "  ".join(f"{m}: {r.get(f'{m}_pick') or '-'}" for m in models)
        lines.append(f"{'':>8}  faster measured: {r['measured_pick']}   picked by {picks}")
    return "\n".join(lines) + "\n"


def run_demo(args: argparse.Namespace) -> int:
    from .study import calibrate, cluster_up, part_alltoall

    if os.geteuid() != 0:
        raise CommodelError(
            "the cluster demo needs root (it builds an emulated cluster from network "
            "namespaces); without root, `commodel demo` shows the prediction-only demo"
        )
    spec = getattr(args, "spec", None) or default_spec()
    reps = min(int(getattr(args, "reps", 8) or 8), 8)
    work = tempfile.mkdtemp(prefix="commodel-demo-")
    out = getattr(args, "output", None) or os.path.join(work, "report")
    os.makedirs(out, exist_ok=True)

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    with cluster_up(spec, "cmdemo", log=log) as name, warnings.catch_warnings():
        # the fitted platform's notes (e.g. a bidirectional b clipped to 2 b(1)) are in
        # the report's files; the demo prints only its table
        warnings.simplefilter("ignore", UserWarning)
        platform, _ = calibrate(name, spec, work, max(DEMO_SIZES), log=log)
        rows = part_alltoall(name, platform, 8, list(DEMO_SIZES), reps, work, out, log=log)
    print(f"Alltoall A (xor pairwise) and B (post all receives) on {os.path.basename(spec)}, "
          f"measured with real TCP vs predicted from the fitted platform")  # fmt: skip
    sys.stdout.write(format_rows(rows))
    print(f"report, CSV and plots in {out}")
    return 0
