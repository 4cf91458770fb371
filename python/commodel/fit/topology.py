"""The ``network`` section of a topology campaign: a ``crossbar`` or ``racks`` network of
what :func:`commodel.topology_inference.infer` finds in its rounds of concurrent flows."""

from __future__ import annotations

from ..errors import CommodelError
from ..topology_inference import Inference, infer, rounds_of


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
    found = infer(rounds_of(samples, n, size))
    section, note = network_section(found)
    return {"network": section, "__comment__": note}
