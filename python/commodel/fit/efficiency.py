"""``tcp.efficiency`` from an ``efficiency`` campaign (model ``tcpflow``).

Per size m, the median round times T (the last flow's end, stragglers included) of the
one-way, exchange and duplex rounds give e_x(m) = T_oneway / T_exchange and
e_d(m) = T_oneway / T_duplex. A ratio above 1 (both ways measured faster than one way,
which is noise) is written as 1, and the comment says so. With two nodes there is no
duplex round (a node cannot send to one peer and receive from another); e_d is then e_x,
which ``tcpflow`` never uses on two nodes.
"""

from __future__ import annotations

import statistics
from typing import Any

from ..errors import CommodelError
from .assemble import fitter


def round_times(samples: list[dict[str, Any]]) -> dict[tuple[str, int], list[float]]:
    """(pattern, size) -> the round time of every repetition."""
    spans: dict[tuple[str, int, int], float] = {}
    for s in samples:
        if s.get("phase") != "efficiency" or s.get("quantity") != "flow":
            continue
        key = (str(s["pattern"]), int(s["size_bytes"]), int(s["repetition"]))
        spans[key] = max(spans.get(key, 0.0), float(s["value_s"]))
    out: dict[tuple[str, int], list[float]] = {}
    for (pattern, size, _rep), t in sorted(spans.items()):
        out.setdefault((pattern, size), []).append(t)
    return out


def efficiency_section(samples: list[dict[str, Any]]) -> tuple[dict[str, Any], str]:
    """The ``efficiency`` part of the ``tcp`` section and a comment with the medians."""
    times = round_times(samples)
    sizes = sorted({m for (p, m) in times if p == "oneway" and (("exchange", m) in times)})
    if not sizes:
        raise CommodelError("the efficiency campaign has no one-way and exchange rounds")
    table: dict[str, list[float]] = {"exchange": [], "duplex": []}
    notes = []
    capped = []
    for m in sizes:
        t_ow = statistics.median(times[("oneway", m)])
        t_x = statistics.median(times[("exchange", m)])
        t_d = statistics.median(times[("duplex", m)]) if ("duplex", m) in times else t_x
        line = f"{m} B: one-way {t_ow * 1e3:.3f} ms, exchange {t_x * 1e3:.3f} ms"
        if ("duplex", m) in times:
            line += f", duplex {t_d * 1e3:.3f} ms"
        notes.append(line)
        for key, t in (("exchange", t_x), ("duplex", t_d)):
            e = t_ow / t
            if e > 1:
                capped.append(f"{key}({m} B) = {e:.3f}")
                e = 1.0
            table[key].append(round(e, 4))
    note = "median round times: " + "; ".join(notes)
    if capped:
        note += "\nmeasured above 1, written as 1: " + ", ".join(capped)
    return {"sizes": sizes, **table}, note


@fitter("efficiency")
def _fit(db, camp) -> dict[str, Any]:
    section, note = efficiency_section(db.samples(camp.id))
    return {"tcp": {"efficiency": section}, "__comment__": note}
