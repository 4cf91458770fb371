"""``commodel measure WHAT --db FILE``: the MPI benchmarks, run under mpirun.

Every rank parses the same command line; rank 0 drives the benchmark, writes the results
database and prints; the other ranks stay quiet. A subcommand per measurement of
:mod:`commodel.measure.registry`, its flags made from the measurement's options
(:mod:`commodel.measure.unit`); and ``collective-sweep``, which starts one mpirun per
algorithm of ``measure collective``.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from typing import Any

from .common import int_list, size_arg, size_list

HELP = "run an MPI benchmark under mpirun and store every sample in a results database"

MPIRUN_EXAMPLE = (
    "mpirun -n 2 --mca btl tcp,self python3 -m commodel measure plogp --db results.duckdb"
)


def _names(text: str) -> list[str]:
    """argparse type: words separated by commas, ``eth0,eth1``."""
    return [x.strip() for x in text.split(",")]


# how the command line reads each kind of option (commodel.measure.unit.KINDS)
PARSERS = {
    "int": int,
    "float": float,
    "size": size_arg,
    "sizes": size_list,
    "counts": int_list,
    "names": _names,
    "text": None,
    "path": None,
}


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", required=True, metavar="FILE", help="results database (DuckDB file)")
    p.add_argument(
        "--resume",
        nargs="?",
        const=-1,
        type=int,
        metavar="ID",
        help="continue campaign ID (default: the latest unfinished one) with the same options",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def add_options(p: argparse.ArgumentParser, options: type, positional: bool) -> None:
    """The flags of an options dataclass (``positional``: its positional arguments only,
    else the others), in the order the dataclass declares them."""
    from ..measure.unit import cli_options

    for name, flag in cli_options(options):
        if flag.positional != positional:
            continue
        kw: dict[str, Any] = {"help": flag.help or None}
        if flag.positional:
            p.add_argument(name, metavar=flag.metavar, **kw)
            continue
        text = flag.flag or "--" + name.replace("_", "-")
        kw["dest"] = name
        if flag.kind == "flag":
            p.add_argument(text, action="store_const", const=flag.const, default=None, **kw)
            continue
        if PARSERS[flag.kind] is not None:
            kw["type"] = PARSERS[flag.kind]
        if flag.choices is not None:
            kw["choices"] = flag.choices
        else:
            kw["metavar"] = flag.metavar or text.lstrip("-").upper().replace("-", "_")
        if flag.required:
            kw["required"] = True
        p.add_argument(text, **kw)


def given(args: argparse.Namespace, options: type) -> dict[str, Any]:
    """The options the command line gave (None: not given, the default applies)."""
    from ..measure.unit import cli_options

    out = {}
    for name, flag in cli_options(options):
        value = getattr(args, name, None)
        if flag.kind == "path" and value is not None:
            value = os.path.abspath(value)
        out[name] = value
    return out


def register(subparsers: Any) -> argparse.ArgumentParser:
    from ..measure.registry import BY_NAME, UNITS

    parser = subparsers.add_parser(
        "measure",
        help=HELP,
        description="Run an MPI benchmark (under mpirun) and store every raw sample in a "
        f"DuckDB results database. Example: {MPIRUN_EXAMPLE}",
    )
    sub = parser.add_subparsers(dest="benchmark", metavar="WHAT", required=True)
    for unit in UNITS:
        m = unit.measurement
        if not m.command:
            continue
        p = sub.add_parser(m.name, help=m.help, description=m.description)
        add_options(p, m.options, positional=True)
        _common(p)
        add_options(p, m.options, positional=False)
        p.set_defaults(func=run, unit=unit)

    options = BY_NAME["collective"].measurement.options
    p = sub.add_parser(
        "collective-sweep",
        help="run 'measure collective' once per algorithm (starts mpirun itself)",
        description="Not under mpirun: starts one mpirun per algorithm (the MPI's default "
        "decision, then every algorithm forced: Open MPI's coll/tuned ones, or with --mpi "
        "those of MPICH or Intel MPI), each a campaign in --db; a complete campaign with "
        "the same options is kept, an unfinished one resumed.",
    )
    p.add_argument("--db", required=True, metavar="FILE", help="results database (DuckDB file)")
    p.add_argument("-n", "--np", type=int, required=True, metavar="P", help="ranks per mpirun")
    p.add_argument(
        "--mpirun",
        default="mpirun",
        metavar="CMD",
        help="mpirun and its options, one string ('mpirun --mca btl tcp,self')",
    )
    p.add_argument(
        "--algorithms",
        type=int_list,
        metavar="N,...",
        help="only these algorithm numbers (0: default decision)",
    )
    p.add_argument(
        "--mpi",
        default="openmpi-4.1",
        metavar="NAME",
        help="the MPI --mpirun starts, whose algorithms are forced: openmpi-4.1 (MCA "
        "parameters; the default), openmpi-5.0, mpich (MPIR_CVAR_<COLL>_INTRA_ALGORITHM) or "
        "intel-mpi (I_MPI_ADJUST_<COLL>=<id>); mpich and intel-mpi: the algorithms with a "
        "generator",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_options(p, options, positional=False)
    p.set_defaults(func=run_collective_sweep, options=options)
    return parser


def run(args: argparse.Namespace) -> int:
    """``measure NAME``: run the measurement's campaign, then print its summary (rank 0)."""
    from ..measure.common import run_campaign

    unit = args.unit
    m = unit.measurement
    opts = m.validate(given(args, m.options))
    code, result = run_campaign(
        m.name,
        opts,
        args.db,
        m.procedure(opts),
        min_ranks=m.min_ranks,
        resume=args.resume is not None,
        resume_id=None if args.resume in (None, -1) else args.resume,
        command=shlex.join(["commodel"] + sys.argv[1:]),
        progress=not args.quiet,
    )
    if result is not None:
        print(unit.summary(result, args.db))
    return code


def run_collective_sweep(args: argparse.Namespace) -> int:
    from ..measure import collective
    from ..mpis import get as get_mpi

    opts = given(args, args.options)
    collective.validate_options(opts, environ={})  # bad options fail before any mpirun
    return collective.sweep(
        args.db,
        opts,
        args.np,
        shlex.split(args.mpirun),
        algorithms=args.algorithms,
        quiet=args.quiet,
        mpi=get_mpi(args.mpi).name,
    )
