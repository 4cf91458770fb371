"""``tcp.efficiency`` from an ``efficiency`` campaign (model ``tcpflow``).

Per size m, with T_ow the mean time of a one-way flow:

* e_x(m) = T_ow / the mean, over exchanging pairs and repetitions, of the later of the
  pair's two flows: what a node that sends to and receives from one peer waits for. (In an
  exchange one direction often finishes in the one-way time and the other takes up to
  twice that; the expectation of the pair's time is what the model charges.)
* e_d(m) = T_ow / the mean time of a flow of the ring (every node sends and receives, with
  different peers).

A ratio above 1 (both ways measured faster than one way: noise) is written as 1, and the
comment says so. With two nodes there is no ring; e_d is then e_x, which ``tcpflow`` never
uses on two nodes. The spread between the flows of one round (stragglers) is not part of
e: the comment gives the mean round time (the last flow's end) beside it.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

from ..errors import CommodelError
from .assemble import fitter

Flows = dict[tuple[int, int], float]  # (src, dst) -> seconds, one repetition


def flows_by_round(samples: list[dict[str, Any]]) -> dict[tuple[str, int], list[Flows]]:
    """(pattern, size) -> per repetition, the time of each flow."""
    reps: dict[tuple[str, int], dict[int, Flows]] = defaultdict(lambda: defaultdict(dict))
    for s in samples:
        if s.get("phase") != "efficiency" or s.get("quantity") != "flow":
            continue
        key = (str(s["pattern"]), int(s["size_bytes"]))
        reps[key][int(s["repetition"])][(int(s["src"]), int(s["dst"]))] = float(s["value_s"])
    return {k: [v[r] for r in sorted(v)] for k, v in sorted(reps.items())}


def pair_times(rounds: list[Flows]) -> list[float]:
    """The later flow of every exchanging pair of every repetition."""
    return [
        max(t, flows[(b, a)])
        for flows in rounds
        for (a, b), t in flows.items()
        if a < b and (b, a) in flows
    ]


def efficiency_section(samples: list[dict[str, Any]]) -> tuple[dict[str, Any], str]:
    """The ``efficiency`` part of the ``tcp`` section and a comment with the means."""
    rounds = flows_by_round(samples)
    sizes = sorted({m for (p, m) in rounds if p == "oneway" and ("exchange", m) in rounds})
    if not sizes:
        raise CommodelError("the efficiency campaign has no one-way and exchange rounds")
    table: dict[str, list[float]] = {"exchange": [], "duplex": []}
    notes, capped = [], []
    for m in sizes:
        t_ow = statistics.mean(t for f in rounds[("oneway", m)] for t in f.values())
        pairs = pair_times(rounds[("exchange", m)])
        if not pairs:
            raise CommodelError(f"the exchange rounds of {m} B have no pair with both flows")
        t_x = statistics.mean(pairs)
        ring = rounds.get(("duplex", m))
        t_d = statistics.mean(t for f in ring for t in f.values()) if ring else t_x
        span = statistics.mean(max(f.values()) for f in rounds[("exchange", m)])
        line = (
            f"{m} B: one-way flow {t_ow * 1e3:.3f} ms, exchanging pair {t_x * 1e3:.3f} ms "
            f"(round {span * 1e3:.3f} ms)"
        )
        if ring:
            line += f", ring flow {t_d * 1e3:.3f} ms"
        notes.append(line)
        for key, t in (("exchange", t_x), ("duplex", t_d)):
            e = t_ow / t
            if e > 1:
                capped.append(f"{key}({m} B) = {e:.3f}")
                e = 1.0
            table[key].append(round(e, 4))
    note = "mean times: " + "; ".join(notes)
    if capped:
        note += "\nmeasured above 1, written as 1: " + ", ".join(capped)
    return {"sizes": sizes, **table}, note


@fitter("efficiency")
def _fit(db, camp) -> dict[str, Any]:
    section, note = efficiency_section(db.samples(camp.id))
    return {"tcp": {"efficiency": section}, "__comment__": note}
