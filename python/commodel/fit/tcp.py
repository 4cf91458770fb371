"""The ``tcp`` section from a ``tcp`` campaign (the hosts' TCP settings).

``rto`` (T_RTO of PlogPT eq. 14 and of the many-to-one escalations) is the largest
RTO_min over the hosts: a timeout waits for the sender's timer, and the slowest one bounds
a collective. ``eps_S`` is the threshold with which ``fit`` infers switch boundaries from
b(h), d(h) (PlogPT eq. 5, the same value the tree fit reports), ``eps_T`` the documented
default of 50 us (docs/models.md).
"""

from __future__ import annotations

from typing import Any

from ..errors import CommodelError
from .tree import EPS_S_DEFAULT

EPS_T_DEFAULT = 50e-6


def tcp_section(samples: list[dict[str, Any]]) -> tuple[dict[str, Any], str]:
    """The section and a comment naming where each host's RTO_min came from."""
    rows = [s for s in samples if s["quantity"] == "rto_min"]
    if not rows:
        raise CommodelError("the tcp campaign has no rto_min samples")
    rto = max(float(s["value_s"]) for s in rows)
    sources = sorted(
        {
            f"{(s.get('extra') or {}).get('source', '?')} "
            f"({(s.get('extra') or {}).get('congestion_control', '?')})"
            for s in rows
        }
    )
    note = (
        f"rto = the largest RTO_min of {len(rows)} hosts ({', '.join(sources)}); "
        f"eps_S as the tree fit, eps_T default"
    )
    return {"rto": rto, "eps_S": EPS_S_DEFAULT, "eps_T": EPS_T_DEFAULT}, note


def sections(db, camp) -> dict[str, Any]:
    """The ``tcp`` section of a tcp campaign, with its comment (``commodel fit``)."""
    section, note = tcp_section(db.samples(camp.id))
    return {"tcp": section, "__comment__": note}


def complete(sections: dict[str, Any], comments: dict[str, str], db, camp) -> None:
    """The ``cpu`` section when every rank ran on one machine (:mod:`commodel.fit.cpu`)."""
    if "plogp" not in sections:
        return
    from .cpu import cpu_section, one_machine

    cores = one_machine(db.samples(camp.id))
    cpu = cpu_section(cores, sections["plogp"]) if cores is not None else None
    if cpu is not None:
        sections["cpu"], comments["cpu"] = cpu
