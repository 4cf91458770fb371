"""The ``cpu`` section: ranks that share one machine's cores (an emulated cluster).

The ``tcp`` campaign records each rank's kernel ``boot_id`` and the cores it may run on.
When every rank reports the same ``boot_id`` the ranks of the calibration shared one
machine, as the ranks of a run on it will: busy-polling MPI ranks then each get C / P of a
core, and their CPU work takes s = P / C times as long (:class:`commodel.platform.sections.
Cpu`). The section holds C and the per-message CPU overheads o_s(m), o_r(m) that PLogP
measured on cores of their own, at the sizes below Open MPI's TCP eager limit: above it
PLogP's o_r(m) holds the wait for the rendezvous, not CPU work.

Where PLogP found no eager limit (``plogp.S`` null: every message eager, as MPICH 5.0
sends over TCP), a blocking send returns only once the socket has taken the message, so
o_s(m) holds the wait for the wire (under MPICH on an emulated cluster 7.9 ms at 56 KiB, the
NIC's time for those bytes, where Open MPI's send took 0.06 ms). The send's CPU work is
then taken as the receive's, min(o_s(m), o_r(m)): each is one copy of the message. Decided
on MPICH's calibration of one held-out cluster and tested on another (docs/advise.md,
*Measured on a cluster advise never saw*); Open MPI, whose fit finds the eager limit, is
unchanged.
"""

from __future__ import annotations

from typing import Any

from ..openmpi import EAGER_LIMIT


def one_machine(tcp_samples: list[dict[str, Any]]) -> int | None:
    """C, the cores of the one machine every rank ran on (the union of the ranks'
    affinities: ranks bound to cores of their own do not share them); None when the ranks
    ran on more than one machine, or did not say (campaigns measured before boot_id was
    recorded)."""
    rows = [s for s in tcp_samples if s.get("quantity") == "rto_min"]
    extras = [s.get("extra") or {} for s in rows]
    boots = {e.get("boot_id") for e in extras}
    if len(rows) < 2 or len(boots) != 1 or not next(iter(boots)):
        return None
    cores: set[int] = set()
    for e in extras:
        if not isinstance(e.get("cpus"), list):
            return None
        cores.update(int(c) for c in e["cpus"])
    return len(cores) or None


def cpu_section(cores: int, plogp: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
    """The section from C and a fitted ``plogp`` section, and its comment; None when
    PLogP has no size below the eager limit."""
    keep = [i for i, m in enumerate(plogp["sizes"]) if m < EAGER_LIMIT]
    if not keep:
        return None
    o_s = [plogp["o_s"][i] for i in keep]
    o_r = [plogp["o_r"][i] for i in keep]
    blocking = "S" in plogp and plogp["S"] is None
    if blocking:
        o_s = [min(a, b) for a, b in zip(o_s, o_r)]
    section = {
        "cores": cores,
        "sizes": [plogp["sizes"][i] for i in keep],
        "o_s": o_s,
        "o_r": o_r,
    }
    note = (
        f"every rank ran on one machine (one boot_id) with {cores} cores: P ranks on it share "
        f"them, s = P / {cores} (docs/models.md, ranks sharing cores); o_s, o_r are plogp's "
        f"below {EAGER_LIMIT} B (the eager limit)"
    )
    if blocking:
        note += (
            "; plogp found no eager limit (its sends block until the socket takes the "
            "message, o_s holds that wait): o_s = min(o_s, o_r), one copy each"
        )
    return section, note
