"""A measurement's options declared once (measure/unit.py): defaults, unknown names, flags."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from commodel.errors import CommodelError
from commodel.measure.unit import cli_options, defaults, fill, option


@dataclass(frozen=True)
class Options:
    sizes: list[int] = option([1, 2], "sizes (1,2)", kind="sizes")
    reps: int = option(3, "repetitions (3)", kind="int", flag="--max-reps")
    batch: int = option(5)  # stored, not a flag


def test_defaults_fill_and_the_flags_come_from_one_declaration() -> None:
    assert defaults(Options) == {"sizes": [1, 2], "reps": 3, "batch": 5}
    filled = fill(Options, {"reps": 7, "sizes": None}, "measure x")
    assert filled == {"sizes": [1, 2], "reps": 7, "batch": 5}  # None: not given
    filled["sizes"].append(9)  # a list default is a fresh list each time
    assert defaults(Options)["sizes"] == [1, 2]
    assert [(name, f.flag, f.kind) for name, f in cli_options(Options)] == [
        ("sizes", None, "sizes"),
        ("reps", "--max-reps", "int"),
    ]


def test_an_unknown_option_is_an_error_naming_the_command() -> None:
    with pytest.raises(CommodelError, match=r"measure x: unknown option\(s\) \['rep'\]"):
        fill(Options, {"rep": 3}, "measure x")
    with pytest.raises(ValueError, match="kind 'bytes'"):
        option(1, "a size", kind="bytes")
