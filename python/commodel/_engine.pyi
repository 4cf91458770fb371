"""Type stubs of the compiled engine module ``commodel._engine`` (crates/commodel-py).

Private: users import ``commodel``. Times are integer picoseconds. Errors are raised as the
classes of :mod:`commodel.errors` (``ModelError``, ``DeadlockError``, ``GoalError``,
``CollectiveError``, ``ScheduleError``).
"""

from collections.abc import Callable
from typing import Any, TypedDict, final, type_check_only

__version__: str
__all__ = [
    "__version__",
    "MessageColumns",
    "Schedule",
    "collective",
    "collective_names",
    "collective_options",
    "fixed_decision",
    "model_names",
    "parse_goal",
    "read_goal",
    "simulate",
    "write_collective",
]

@type_check_only
class RtoEventResult(TypedDict):
    """A retransmission timeout and the message it delays."""

    src: int
    dst: int
    bytes: int
    tag: int
    at_ps: int
    delay_ps: int

@type_check_only
class SimulateResult(TypedDict):
    """What :func:`simulate` returns."""

    model: str
    makespan_ps: int
    finish_ps: list[int]
    events: int
    slowest_rank: int
    #: every delivered message, as columns (empty when messages were not recorded)
    messages: MessageColumns
    rto_events: list[RtoEventResult]

@final
class Schedule:
    @property
    def num_ranks(self) -> int: ...
    @property
    def num_ops(self) -> int: ...
    @property
    def bytes_sent(self) -> int: ...
    def to_goal(self) -> str: ...
    def write_goal(self, path: str) -> None: ...
    def rank_ops(
        self, rank: int
    ) -> list[tuple[str, int, int, int, str | None, list[int], list[int]]]: ...

@final
class MessageColumns:
    """Delivered messages as columns of native-endian 8-byte integers (crates/commodel-py
    columns.rs): src, dst, bytes, start_ps, end_ps, rto (uint64) and tag (int64, -1 any)."""

    fields: list[str]
    def __len__(self) -> int: ...
    def column(self, field: str, start: int = 0, stop: int | None = None) -> bytes: ...

def parse_goal(text: str, filename: str = "<string>") -> Schedule: ...
def read_goal(path: str) -> Schedule: ...
def collective(name: str, ranks: int, size: int, **options: int | float | None) -> Schedule: ...
def write_collective(
    name: str,
    ranks: int,
    size: int,
    path: str | None = None,
    write: Callable[[bytes], object] | None = None,
    **options: int | float | None,
) -> tuple[int, int, int]: ...
def collective_names() -> list[tuple[str, str]]: ...
def collective_options() -> list[tuple[str, str, int, int, int | float | None, str, str]]: ...
def model_names() -> list[str]: ...
def fixed_decision(collective: str, p: int, size: int) -> int | None: ...
def simulate(
    schedule: Schedule,
    model: str,
    params: dict[str, Any],
    record_messages: bool = True,
) -> SimulateResult: ...
