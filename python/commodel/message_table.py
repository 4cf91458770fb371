"""The messages of a prediction, kept as the engine's columns.

The engine hands its message records over as columns of 8-byte integers
(``commodel._engine.MessageColumns``) instead of one Python object per message.
:class:`MessageTable` wraps them: it is a sequence of :class:`Message` (the record of one
message, defined here and offered as ``commodel.Message``) built on access (so
``prediction.messages`` reads like a list), and gives writers and plots numpy columns for
ranges of rows (:meth:`MessageTable.chunks`), so their memory does not grow with the number
of messages.

Columns: ``src``, ``dst``, ``bytes`` (uint64), ``tag`` (int64, -1 for any tag),
``start_ps``, ``end_ps`` (uint64, integer picoseconds: the send started, the matching
receive completed), ``rto`` (bool: a retransmission timeout delayed the message), and
``start_s``, ``end_s`` (float64 seconds, exactly ``commodel.units.ps_to_seconds``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

from .units import PS_PER_SECOND

if TYPE_CHECKING:  # numpy is imported on first use: `import commodel` stays light
    import numpy as np

#: Rows per chunk when walking a table: a few MB of columns at a time.
CHUNK_ROWS = 65536

# Below 2**53 picoseconds a float64 holds the integer exactly, so one float division
# rounds like Python's int / int (correctly rounded); above, that path is used.
_EXACT_FLOAT = 2**53


@dataclass(frozen=True)
class Message:
    """One message: its sender started it at ``start_s``, the receive completed at ``end_s``."""

    src: int
    dst: int
    bytes: int
    tag: int
    start_s: float
    end_s: float
    rto: bool = False


def seconds(ps: np.ndarray) -> np.ndarray:
    """Integer picoseconds to float seconds, bit for bit as ``ps_to_seconds``."""
    import numpy as np

    out = ps.astype(np.float64) / float(PS_PER_SECOND)
    big = ps >= _EXACT_FLOAT
    if big.any():
        out[big] = [int(p) / PS_PER_SECOND for p in ps[big]]
    return out


class MessageTable(Sequence):
    """Every message of one simulation, read from the engine's columns."""

    FIELDS = ("src", "dst", "bytes", "tag", "start_ps", "end_ps", "rto", "start_s", "end_s")
    #: The fields of :class:`Message`, in its order.
    MESSAGE_FIELDS = ("src", "dst", "bytes", "tag", "start_s", "end_s", "rto")

    def __init__(self, columns: Any) -> None:
        self._columns = columns

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (an MPI worker's prediction sent back, commodel.parallel) as the plain
        list of its :class:`~commodel.prediction.Message`: the engine's columns do not
        pickle."""
        return (list, (list(self),))

    def __len__(self) -> int:
        return len(self._columns)

    def column(self, name: str, start: int = 0, stop: int | None = None) -> np.ndarray:
        """Rows ``start:stop`` of one column (see the module documentation)."""
        if name in ("start_s", "end_s"):
            return seconds(self.column(name[:-2] + "_ps", start, stop))
        import numpy as np

        raw = self._columns.column(name, start, stop)
        values = np.frombuffer(raw, dtype=np.int64 if name == "tag" else np.uint64)
        return values.astype(bool) if name == "rto" else values

    def chunks(
        self, names: Sequence[str] = FIELDS, rows: int = CHUNK_ROWS
    ) -> Iterator[dict[str, np.ndarray]]:
        """The columns ``names`` for ``rows`` messages at a time, in order."""
        for start in range(0, len(self), rows):
            yield {name: self.column(name, start, start + rows) for name in names}

    def _messages(self, start: int, stop: int) -> list[Message]:
        columns = [self.column(name, start, stop).tolist() for name in self.MESSAGE_FIELDS]
        return [Message(*row) for row in zip(*columns)]

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...
    def __getitem__(self, index: int | slice) -> Message | list[Message]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step == 1:
                return self._messages(start, max(start, stop))
            return [self[i] for i in range(start, stop, step)]
        i = index + len(self) if index < 0 else index
        if not 0 <= i < len(self):
            raise IndexError(f"message index {index} out of range ({len(self)} messages)")
        return self._messages(i, i + 1)[0]

    def __iter__(self) -> Iterator[Message]:
        for start in range(0, len(self), CHUNK_ROWS):
            yield from self._messages(start, start + CHUNK_ROWS)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]  # like a list

    def __repr__(self) -> str:
        return f"<MessageTable of {len(self)} messages>"
