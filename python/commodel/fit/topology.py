"""The ``network`` section of a topology campaign: a ``crossbar`` or ``racks`` network of
what :func:`commodel.topology_inference.infer` finds in its rounds of concurrent flows."""

from __future__ import annotations

import math

from ..errors import CommodelError
from ..topology_inference import Inference, Level, Rounds, fit_capacity, infer, loss, rounds_of


def contiguous(groups: list[list[int]]) -> bool:
    """The groups, in order, are runs of consecutive nodes 0..N-1."""
    flat = [i for g in groups for i in g]
    return flat == list(range(len(flat)))


def written_level(found: Inference, rounds: Rounds | None) -> tuple[Level | None, str | None]:
    """The one level of groups the ``racks`` topology can hold: the only one found, or of
    two levels (groups within groups) the one that alone explains the rounds better (the
    lower loss, its capacity fitted alone), and a note saying which was left out. Without
    ``rounds``, the finer level."""
    if not found.levels:
        return None, None
    if len(found.levels) == 1:
        return found.levels[0], None
    if rounds is None:
        kept, left = found.levels[0], found.levels[1]
        why = "the finer one is written"
    else:
        alone = []
        for lv in found.levels[:2]:
            cap, value = fit_capacity(rounds, found.nic, lv.group, [], 0)
            alone.append((value, Level(lv.group, cap)))
        k = 0 if alone[0][0] <= alone[1][0] else 1
        kept, left = alone[k][1], alone[1 - k][1]
        why = (
            f"alone, the finer level's loss is {alone[0][0]:.3f} and the coarser's "
            f"{alone[1][0]:.3f}: the {'finer' if k == 0 else 'coarser'} one is written"
        )
    return kept, (
        f"of two levels the racks topology holds one; {why} (groups {kept.groups}, uplinks "
        f"{kept.capacity:.4g} B/s); not written: {left.groups} (uplinks {left.capacity:.4g} B/s)"
    )


def network_section(found: Inference, rounds: Rounds | None = None) -> tuple[dict, str]:
    """The ``network`` section of what :func:`infer` found, and a comment saying how: a
    ``crossbar`` without levels, ``racks`` with one. Of two levels (groups within groups),
    the one that alone explains ``rounds`` better (:func:`written_level`): the platform
    format has no nested groups yet, and the comment names the other."""
    return _section_of(found, *written_level(found, rounds))


def _section_of(found: Inference, level: Level | None, left: str | None) -> tuple[dict, str]:
    """The ``network`` section holding ``level`` (None: a crossbar) and its comment, with
    ``left``, the note on a level not written."""
    note = [
        f"topology inferred from concurrent flows of {found.nodes} nodes (measure topology): "
        f"NIC {found.nic * 8 / 1e6:.1f} Mbit/s"
    ] + found.notes
    if level is None:
        note.append("no uplink narrower than its group's NICs: one switch (crossbar)")
        return {
            "topology": "crossbar",
            "nodes": found.nodes,
            "nic": round(found.nic, 1),
        }, "\n".join(note)
    if left is not None:
        note.append(left)
    groups = level.groups
    racks: list = [len(g) for g in groups] if contiguous(groups) else groups
    return (
        {
            "topology": "racks",
            "nodes": found.nodes,
            "racks": racks,
            "nic": round(found.nic, 1),
            "backbone": round(level.capacity, 1),
        },
        "\n".join(note),
    )


def sections(db, camp) -> dict:
    """The ``network`` section (crossbar or racks) of a topology campaign (``commodel fit``)."""
    samples = db.samples(camp.id)
    if not samples:
        raise CommodelError("the topology campaign has no samples")
    n = max(int(s["n_ranks"]) for s in samples)
    size = int(camp.options.get("size", samples[0]["size_bytes"]))
    rounds = rounds_of(samples, n, size)
    found = infer(rounds)
    level, left = written_level(found, rounds)
    section, note = _section_of(found, level, left)
    sigma = spread_of(rounds, found.nic, [] if level is None else [level])
    note += (
        f"\ntcp.spread {sigma:.3f}: the spread of the log of a flow's time about the fitted "
        f"model over every round (a prediction's 80% interval, commodel.spread)"
    )
    return {"network": section, "tcp": {"spread": round(sigma, 4)}, "__comment__": note}


def spread_of(rounds: Rounds, nic: float, levels: list[Level]) -> float:
    """sigma: the root mean square of log(measured / predicted) over every flow of the
    rounds, the solo flows included, under the levels written (``nic`` B/s NICs)."""
    flows = sum(1 for t in rounds.solo if t > 0) + sum(len(rd.flows) for rd in rounds.rounds)
    return math.sqrt(loss(rounds, nic, levels) / max(1, flows))
