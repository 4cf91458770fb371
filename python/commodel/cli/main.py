"""The ``commodel`` command: argument parsing, subcommand dispatch and the failure contract.

Exit codes: 0 success; 2 a user error (a :class:`~commodel.errors.CommodelError`, printed
as ``commodel: error: <message>``, or a bad command line); 130 interrupted (Ctrl-C); 1 an
unexpected failure (a bug: a one-line message asking to report it; the traceback only
with ``COMMODEL_DEBUG=1``).

Each subcommand is a module ``commodel.cli.<name>`` listed in :data:`SUBCOMMANDS` with

* ``HELP``: a one-line summary shown by ``commodel --help``;
* ``register(subparsers) -> argparse.ArgumentParser``: adds its parser and calls
  ``parser.set_defaults(func=run)``, where ``run(args) -> int`` returns the exit code.

A subcommand module must import only the standard library and light commodel modules at
import time (heavy or optional dependencies such as numpy, mpi4py, duckdb, matplotlib
inside ``run``), so that ``commodel --help`` stays fast. ``commodel NAME ...`` imports the
module of ``NAME`` alone (its process carries no other subcommand's modules). If its
import fails anyway because an optional dependency is missing, only that subcommand
fails, with a message saying how to install what it needs.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import textwrap
import warnings
from collections.abc import Sequence
from typing import Callable

from ..errors import CommodelError, MissingDependencyError, PlatformWarning

# Subcommand modules, in the order `commodel --help` lists them. A module that does not
# exist (yet) is left out.
SUBCOMMANDS = [
    "schedule",
    "predict",
    "demo",
    "measure",
    "calibrate",
    "fit",
    "db",
    "plot",
    "cluster",
    "validate",
    "advise",
    "study",
]

# Optional dependency -> the extra of pyproject.toml that installs it.
OPTIONAL_EXTRAS = {
    "mpi4py": "measure",
    "duckdb": "fit",
    "scipy": "fit",
    "pyarrow": "fit",
    "matplotlib": "plot",
}

DESCRIPTION = """\
commodel predicts how long the communication of an MPI program takes on a commodity
cluster (TCP/IP over Ethernet), from a schedule of its messages and a platform file
describing the cluster.

pipeline:
  schedule   write a collective's messages as a GOAL schedule (or bring your own .goal)
  predict    run a schedule through the engine under a model on a platform (a YAML
             file, or a built-in: nomura2007, loggopsim-default); models:
{models}
  measure    measure a real cluster under mpirun; fit turns measurements into a platform
"""

EPILOG = """\
examples:
  commodel demo
  commodel schedule --list
  commodel schedule alltoall-xor-pairwise --ranks 32 --size 64KiB -o a2a.goal
  commodel predict a2a.goal --platform nomura2007 --model plogp
  commodel predict a2a.goal --platform examples/platforms/loggopsim-default.yaml --json

Run 'commodel SUBCOMMAND --help' for the options of one subcommand. Formats and models
are described in docs/formats.md and docs/models.md; a walk-through in docs/tutorial.md.

exit codes:
  0    success
  1    internal error: a bug in commodel, please report it (COMMODEL_DEBUG=1 shows the traceback)
  2    bad input (command line, schedule, platform or other file) or a failed measurement;
       the message on stderr starts with 'commodel: error:' and names what is at fault
  130  interrupted (Ctrl-C)
"""


def _version() -> str:
    from .. import __version__

    return __version__


def _unavailable(name: str, exc: BaseException) -> Callable[[argparse.Namespace], int]:
    """A stand-in ``run`` for a subcommand whose module could not be imported."""

    def run(args: argparse.Namespace) -> int:
        if isinstance(exc, ImportError):
            missing = (getattr(exc, "name", None) or "").split(".")[0]
            if missing and missing != "commodel":
                raise MissingDependencyError(
                    missing, OPTIONAL_EXTRAS.get(missing), f"commodel {name}"
                ) from exc
        raise exc

    return run


class _VersionAction(argparse.Action):
    """``--version``: the installed version, looked up only when asked (see _version)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(
            option_strings,
            dest=argparse.SUPPRESS,
            default=argparse.SUPPRESS,
            nargs=0,
            help="show program's version number and exit",
        )

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        print(f"commodel {_version()}")
        parser.exit()


def _named_subcommand(argv: Sequence[str]) -> list[str]:
    """The subcommands to load for ``argv``: the one it starts with, if it starts with one
    (its module alone is imported: a process that predicts does not carry the modules of
    ``measure`` or ``advise``); every one otherwise (``--help``, ``--version``, a typo)."""
    if argv and argv[0] in SUBCOMMANDS:
        return [argv[0]]
    return SUBCOMMANDS


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of the ``commodel`` command; given ``argv``, with only the subcommand it
    names (see :func:`_named_subcommand`)."""
    from ..platform import model_names

    indent = " " * 13
    models = textwrap.fill(
        ", ".join(model_names()),
        86,
        initial_indent=indent,
        subsequent_indent=indent,
        break_on_hyphens=False,  # model names stay whole (zhu-fair)
    )
    parser = argparse.ArgumentParser(
        prog="commodel",
        description=DESCRIPTION.format(models=models),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_VersionAction)
    subparsers = parser.add_subparsers(title="subcommands", dest="command", metavar="SUBCOMMAND")
    names = SUBCOMMANDS if argv is None else _named_subcommand(argv)
    for name in names:
        module_name = f"{__package__}.{name}"
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue  # this subcommand does not exist in this version
            sub = subparsers.add_parser(name, help=f"(unavailable: {exc})", add_help=False)
            sub.set_defaults(func=_unavailable(name, exc), _any_arguments=True)
            continue
        except Exception as exc:  # a broken module must not take the other subcommands down
            sub = subparsers.add_parser(name, help="(unavailable: failed to load)", add_help=False)
            sub.set_defaults(func=_unavailable(name, exc), _any_arguments=True)
            continue
        module.register(subparsers)
    return parser


def _report_unexpected(exc: BaseException) -> int:
    print(
        f"commodel: internal error: {type(exc).__name__}: {exc}\n"
        "This is a bug in commodel; please report it with the command you ran "
        "(set COMMODEL_DEBUG=1 to see the traceback).",
        file=sys.stderr,
    )
    return 1


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings of commodel's own (a platform table that falls, a clamped b(h)) as one line
    ``commodel: warning: ...``; anything else as Python shows it."""
    if category.__module__.startswith("commodel"):
        print(f"commodel: warning: {message}", file=file or sys.stderr)
    else:
        _python_showwarning(message, category, filename, lineno, file, line)


_python_showwarning = warnings.showwarning


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``commodel`` command; return its exit code."""
    debug = os.environ.get("COMMODEL_DEBUG", "") not in ("", "0")
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        # the command shows its own warnings once each, whatever the interpreter's filters
        warnings.simplefilter("default", PlatformWarning)
        return _main(argv, debug)


def _main(argv: Sequence[str] | None, debug: bool) -> int:
    try:
        parser = build_parser(sys.argv[1:] if argv is None else argv)
        args, extra = parser.parse_known_args(argv)
        if extra and not getattr(args, "_any_arguments", False):
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        if getattr(args, "func", None) is None:
            parser.print_usage(sys.stderr)
            print(
                "commodel: error: a subcommand is required (see 'commodel --help')",
                file=sys.stderr,
            )
            return 2
        if getattr(args, "executor", None) is not None:
            from ..parallel import use_executor

            use_executor(args.executor)
        return int(args.func(args) or 0)
    except CommodelError as exc:
        if debug:
            raise
        print(f"commodel: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("commodel: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (e.g. `commodel schedule ... | head`): stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except SystemExit:
        raise
    except Exception as exc:
        if debug:
            raise
        return _report_unexpected(exc)


if __name__ == "__main__":
    sys.exit(main())
