"""Measured and predicted messages paired for ``commodel validate`` (no I/O, no numpy).

Measured messages are matched to predicted ones by ``(src, dst, tag, bytes)`` and, among
messages with the same key, by order (MPI's non-overtaking rule: the k-th send from src to
dst with a tag matches the k-th receive). :func:`rto_repetitions` counts the repetitions
a TCP retransmission timeout delayed; :func:`picks` names the fastest algorithm.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import CommodelError
from ..stats import relative_error

MessageKey = tuple[int, int, int, int]  # src, dst, tag, bytes


@dataclass(frozen=True)
class MeasuredMessage:
    """A message as measured: completion time of the receive (median over repetitions)."""

    src: int
    dst: int
    tag: int
    bytes: int
    end_s: float
    order: int = 0  # posting order at the receiver (op index)


@dataclass(frozen=True)
class PredictedMessage:
    src: int
    dst: int
    tag: int
    bytes: int
    end_s: float
    start_s: float = 0.0
    rto: bool = False


@dataclass(frozen=True)
class MessagePair:
    src: int
    dst: int
    tag: int
    bytes: int
    measured_s: float
    predicted_s: float
    rto: bool

    @property
    def error(self) -> float:
        return relative_error(self.predicted_s, self.measured_s)


def match_messages(
    measured: Sequence[MeasuredMessage], predicted: Sequence[PredictedMessage]
) -> list[MessagePair]:
    """Pair measured and predicted messages (module documentation); every one must match.

    A measured receive posted with any source or any tag (``src`` or ``tag`` < 0) cannot be
    paired reliably and is an error.
    """
    by_key: dict[MessageKey, list[PredictedMessage]] = defaultdict(list)
    for p in sorted(predicted, key=lambda m: (m.start_s, m.end_s)):
        by_key[(p.src, p.dst, p.tag, p.bytes)].append(p)
    used: dict[MessageKey, int] = defaultdict(int)
    out = []
    for m in sorted(measured, key=lambda m: (m.dst, m.order)):
        if m.src < 0 or m.tag < 0:
            raise CommodelError(
                f"rank {m.dst}: a receive from any source or with any tag cannot be matched "
                "to a predicted message; validate needs schedules with explicit peers and tags"
            )
        key = (m.src, m.dst, m.tag, m.bytes)
        k = used[key]
        if k >= len(by_key[key]):
            raise CommodelError(
                f"measured message {m.src} -> {m.dst} (tag {m.tag}, {m.bytes} B) has no "
                "predicted counterpart (is it the same schedule?)"
            )
        p = by_key[key][k]
        used[key] = k + 1
        out.append(MessagePair(m.src, m.dst, m.tag, m.bytes, m.end_s, p.end_s, p.rto))
    left = sum(len(v) for v in by_key.values()) - sum(used.values())
    if left:
        raise CommodelError(
            f"{left} predicted message(s) have no measured counterpart (is it the same schedule?)"
        )
    return out


def rto_repetitions(makespans: Sequence[float], rto_min_s: float) -> int:
    """Repetitions that took at least ``0.8 rto_min_s`` longer than the fastest one.

    On the emulated cluster (minimum RTO 200 ms, makespans of a few ms to a few hundred ms
    without loss) such a gap is a TCP retransmission timeout, not scheduling noise.
    """
    if not makespans:
        return 0
    best = min(makespans)
    return sum(1 for s in makespans if s - best >= 0.8 * rto_min_s)


def picks(
    times: dict[str, float | None],
) -> str | None:
    """The name of the smallest time among those not None (the algorithm a model picks)."""
    known = {k: v for k, v in times.items() if v is not None}
    if not known:
        return None
    return min(sorted(known), key=lambda k: known[k])
