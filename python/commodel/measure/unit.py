"""What a measurement declares: its options, once, and itself (:class:`Measurement`).

The options are a dataclass whose fields give the defaults, the command line of
``commodel measure NAME`` and the campaign's stored options. Each field is an :func:`option`: its default, and, for the options a user sets, its flag
and help text. :func:`defaults` and :func:`fill` give the options a campaign stores (the
results database keeps them as JSON, and ``calibrate`` and ``--resume`` compare them);
the measurement's ``validate_options`` starts from :func:`fill` and adds its own checks;
``cli/measure.py`` builds the flags from :func:`cli_options`. A field without help is an
option of the procedure that the command line does not set (a repetition batch, a
confidence bound): it is stored with the campaign all the same.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import CommodelError

#: How the command line reads an option's text (``cli/measure.py`` maps each to a parser).
KINDS = (
    "int",  # a whole number
    "float",  # a number
    "size",  # a size in bytes: 65536 or 64KiB
    "sizes",  # sizes separated by commas: 0,8KiB,32KiB
    "counts",  # whole numbers >= 0 separated by commas: 3,4,8
    "names",  # words separated by commas: eth0,eth1
    "text",  # the text as given (with choices: one of them)
    "flag",  # no value: the flag sets ``const``
    "path",  # a file, made absolute
)


@dataclasses.dataclass(frozen=True)
class Flag:
    """How an option appears on the command line (the metadata of its field)."""

    help: str
    kind: str = "text"
    flag: str | None = None  # default: --name-with-dashes
    choices: tuple[str, ...] | None = None
    metavar: str | None = None
    const: Any = True  # kind "flag": the value the flag sets
    required: bool = False
    positional: bool = False


def option(
    default: Any,
    help: str | None = None,
    *,
    kind: str = "text",
    flag: str | None = None,
    choices: Sequence[str] | None = None,
    metavar: str | None = None,
    const: Any = True,
    required: bool = False,
    positional: bool = False,
) -> Any:
    """A field of an options dataclass: ``default``, and with ``help`` a command-line
    option of kind ``kind`` (:data:`KINDS`) named ``flag`` (default ``--field-name``)."""
    if kind not in KINDS:
        raise ValueError(f"option kind {kind!r} is not one of {KINDS}")
    meta = {}
    if help is not None:
        meta["cli"] = Flag(
            help,
            kind,
            flag,
            tuple(choices) if choices is not None else None,
            metavar,
            const,
            required,
            positional,
        )
    if isinstance(default, list):  # a fresh list per instance
        return dataclasses.field(default_factory=lambda: list(default), metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def defaults(options: type) -> dict[str, Any]:
    """Every option of the dataclass ``options`` with its default, in declaration order."""
    out = {}
    for f in dataclasses.fields(options):
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        else:
            out[f.name] = f.default_factory()  # type: ignore[misc]
    return out


def fill(options: type, given: dict[str, Any], command: str) -> dict[str, Any]:
    """The defaults of ``options`` with the values of ``given`` that are not None; an error
    naming ``command`` for a name that is no option."""
    out = defaults(options)
    unknown = sorted(set(given) - set(out))
    if unknown:
        raise CommodelError(f"{command}: unknown option(s) {unknown}")
    out.update({k: v for k, v in given.items() if v is not None})
    return out


def cli_options(options: type) -> list[tuple[str, Flag]]:
    """The options of ``options`` that the command line sets: (field name, flag), in
    declaration order."""
    return [(f.name, f.metadata["cli"]) for f in dataclasses.fields(options) if "cli" in f.metadata]


@dataclasses.dataclass(frozen=True)
class Measurement:
    """One measurement, as its module under ``measure/`` declares it: ``commodel measure
    NAME`` and the campaigns named NAME in the results database.

    ``validate(given) -> options``: the campaign's options from what the command line (or
    ``calibrate``) gave, defaults filled in (:func:`fill` of ``options``) and checked, with
    errors that name the flag. ``procedure(options)`` returns the function that rank 0 runs
    in the SPMD harness (:func:`commodel.measure.common.run_campaign`); what it returns is
    the ``result`` that ``summary(result)`` prints after ``measure NAME`` when the
    measurement has no fit (with a fit, the fit's ``summary`` prints the fitted values:
    :mod:`commodel.measure.registry`).
    """

    name: str
    help: str  # one line of `commodel measure --help`
    description: str  # `commodel measure NAME --help`
    options: type  # the options dataclass (fields made with `option`)
    validate: Callable[[dict[str, Any]], dict[str, Any]]
    procedure: Callable[[dict[str, Any]], Callable[..., dict[str, Any]]]
    summary: Callable[[dict[str, Any]], str] | None = None
    min_ranks: int = 2
    command: bool = True  # False: no `measure NAME` (run by `calibrate` only)
