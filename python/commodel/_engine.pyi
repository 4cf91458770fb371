"""Type stubs of the compiled engine module ``commodel._engine`` (crates/commodel-py).

Private: users import ``commodel``. Times are integer picoseconds. Errors are raised as the
classes of :mod:`commodel.errors`.
"""

from typing import Any

__version__: str

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

def parse_goal(text: str, filename: str = "<string>") -> Schedule: ...
def read_goal(path: str) -> Schedule: ...
def collective(
    name: str,
    ranks: int,
    size: int,
    root: int = 0,
    seed: int = 0,
    segment: int | None = None,
    degree: int = 1,
    splits: int = 2,
    max_requests: int = 0,
    reduce_ns_per_byte: float = 0.0,
) -> Schedule: ...
def collective_names() -> list[tuple[str, str]]: ...
def model_names() -> list[str]: ...
def simulate(
    schedule: Schedule,
    model: str,
    params: dict[str, Any],
    record_messages: bool = True,
) -> dict[str, Any]: ...
