"""The ``network`` section of a topology campaign: a ``crossbar`` or ``racks`` network of
what :func:`commodel.topology_inference.infer` finds in its rounds of concurrent flows."""

from __future__ import annotations

import math

from ..errors import CommodelError
from ..topology_inference import Inference, Rounds, infer, loss, rounds_of


def contiguous(groups: list[list[int]]) -> bool:
    """The groups, in order, are runs of consecutive nodes 0..N-1."""
    flat = [i for g in groups for i in g]
    return flat == list(range(len(flat)))


def network_section(found: Inference) -> tuple[dict, str]:
    """The ``network`` section of what :func:`infer` found, and a comment saying how: a
    ``crossbar`` without levels, ``racks`` with one. Of two levels (groups within groups),
    the racks are the finer level: the platform format has no nested groups yet, and the
    comment names the coarser one."""
    note = [
        f"topology inferred from concurrent flows of {found.nodes} nodes (measure topology): "
        f"NIC {found.nic * 8 / 1e6:.1f} Mbit/s"
    ] + found.notes
    if not found.levels:
        note.append("no uplink narrower than its group's NICs: one switch (crossbar)")
        return {
            "topology": "crossbar",
            "nodes": found.nodes,
            "nic": round(found.nic, 1),
        }, "\n".join(note)
    level = found.levels[0]
    if len(found.levels) > 1:
        outer = found.levels[1]
        note.append(
            f"a second level of groups {outer.groups} (uplinks {outer.capacity:.4g} B/s) is not "
            "written: the racks topology has one level"
        )
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
    section, note = network_section(found)
    sigma = spread_of(rounds, found)
    note += (
        f"\ntcp.spread {sigma:.3f}: the spread of the log of a flow's time about the fitted "
        f"model over every round (a prediction's 80% interval, commodel.spread)"
    )
    return {"network": section, "tcp": {"spread": round(sigma, 4)}, "__comment__": note}


def spread_of(rounds: Rounds, found: Inference) -> float:
    """sigma: the root mean square of log(measured / predicted) over every flow of the
    rounds, the solo flows included, under the levels found."""
    flows = sum(1 for t in rounds.solo if t > 0) + sum(len(rd.flows) for rd in rounds.rounds)
    return math.sqrt(loss(rounds, found.nic, found.levels) / max(1, flows))
