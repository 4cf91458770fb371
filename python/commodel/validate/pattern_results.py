"""Read the results of ``commodel measure pattern`` from a results database."""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from ..errors import CommodelError
from ..stats import median
from .matching import MeasuredMessage


@dataclass
class MeasuredPattern:
    """One ``measure pattern`` campaign: makespans per repetition, messages (medians)."""

    campaign: int
    schedule: str
    ranks: int
    hosts: list[str]
    makespans: list[float]
    messages: list[MeasuredMessage] = field(default_factory=list)
    # per repetition, the machine's load stored with its makespan (measure/pattern.py)
    machine: list[dict[str, float]] = field(default_factory=list)

    @property
    def makespan_s(self) -> float:
        """The median makespan over the repetitions."""
        return median(self.makespans)

    def wait_shares(self) -> list[float]:
        """Per repetition with the figure: the longest time a rank waited for a CPU, as a
        share of the makespan."""
        return [
            m["rank_wait_max_s"] / span
            for span, m in zip(self.makespans, self.machine)
            if span > 0 and "rank_wait_max_s" in m
        ]

    def machine_bound(self, threshold: float) -> bool:
        """Whether the machine rather than the network set the pace: in the median
        repetition a rank waited for a CPU longer than ``threshold`` of the makespan."""
        shares = self.wait_shares()
        return bool(shares) and median(shares) > threshold


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except OSError:
        return False


def find_campaign(db: Any, schedule: str) -> Any:
    """The latest complete ``pattern`` campaign of ``schedule`` (by path, else file name)."""
    camps = [c for c in db.campaigns() if c.benchmark == "pattern" and c.status == "complete"]
    exact = [c for c in camps if _same_file(str(c.options.get("schedule", "")), schedule)]
    if exact:
        return exact[-1]
    base = os.path.basename(schedule)
    named = [c for c in camps if os.path.basename(str(c.options.get("schedule", ""))) == base]
    if named:
        return named[-1]
    raise CommodelError(
        f"{db.path}: no complete `measure pattern` campaign of {schedule}; measure it first "
        "(give --cluster NAME to let validate run it)"
    )


def campaign_pattern(db: Any, campaign: Any) -> MeasuredPattern:
    """The makespans and the median receive-completion time of every message of a campaign."""
    spans: dict[int, float] = {}
    machine: dict[int, dict[str, float]] = {}
    ends: dict[tuple[int, int], list[float]] = defaultdict(list)
    info: dict[tuple[int, int], tuple[int, int, int, int]] = {}
    for s in db.samples(campaign.id, "pattern"):
        if s["quantity"] == "makespan":
            spans[int(s["repetition"])] = float(s["value_s"])
            machine[int(s["repetition"])] = dict(s["extra"] or {})
        elif s["quantity"] == "recv_end":
            extra = s["extra"] or {}
            key = (int(extra.get("rank", s["dst"])), int(extra.get("op", 0)))
            ends[key].append(float(s["value_s"]))
            info[key] = (
                int(s["src"]),
                int(s["dst"]),
                int(extra.get("tag", 0)),
                int(s["size_bytes"]),
            )
    if not spans:
        raise CommodelError(f"{db.path}: campaign {campaign.id} holds no makespan samples")
    messages = [
        MeasuredMessage(src, dst, tag, size, median(ends[key]), order=key[1])
        for key, (src, dst, tag, size) in sorted(info.items())
    ]
    return MeasuredPattern(
        campaign=campaign.id,
        schedule=str(campaign.options.get("schedule", "")),
        ranks=int(campaign.ranks),
        hosts=list(campaign.hosts),
        makespans=[spans[k] for k in sorted(spans)],
        messages=messages,
        machine=[machine[k] for k in sorted(spans)],
    )


def load_pattern(db_path: str, schedule: str) -> MeasuredPattern:
    """The latest complete measurement of ``schedule`` in the database ``db_path``."""
    from ..db import ResultsDB

    with ResultsDB(db_path, read_only=True) as db:
        return campaign_pattern(db, find_campaign(db, schedule))
