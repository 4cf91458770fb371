"""``tcp.efficiency.fanin``: e_f(m), what TCP loses into a node that many nodes send to.

``measure efficiency``'s ``alltoall`` rounds send m bytes from every node to every other at
once, as Open MPI's linear alltoall does: every node has N - 1 senders. Their TCP windows
together overfill the port in front of the receiver, and a retransmission lost again costs
a timeout (docs/models.md, *Fan-in*). The fit matches the median round time (each
repetition's last flow's end).

e_f(m) is fitted through the model itself, as it predicts: with the platform's other
sections as they are (PLogP, the network, e_x, e_d, ``fifo_limit``, the tail-drop rule,
``cpu``, ``spread``), the value in (0, FANIN_MAX] with which ``tcpflow`` predicts the round
(Open MPI's linear alltoall of N ranks, ``alltoall-basic-linear``) at its measured median,
by bisection: the prediction grows as e_f falls. The prediction is the one ``predict``
gives, the run of median makespan among the noisy runs where the platform has
``tcp.spread`` (docs/models.md, *Stragglers*), and it is set against the median round as
``validate`` sets predictions against measured medians. Below 1, e_f charges the stalls of
many windows into one port; above 1, it takes back the exchange and duplex losses (e_x,
e_d, measured on pairs and rings) from the flows into a node with several senders, where
the rounds ran faster than those losses say (a node's other flows use what one exchange
leaves unused); the flows never run faster than their max-min shares. Where even e_f =
FANIN_MAX predicts the round above its median, e_f is FANIN_MAX (the comment says "not
reached above 1"); where even e_f = 0.001 does not bring the prediction up to it, e_f is 1:
where small messages leave each NIC in posting order (``fifo_limit``), a linear alltoall's
nodes mostly have one sender at a time in the model, and fan-in cannot say what the round
lost. ``tcpflow`` charges e_f to the flows into a node with k >= 2 senders, scaled by
(k - 1)/(N - 2) (docs/models.md).
"""

from __future__ import annotations

import copy
import statistics
from collections import defaultdict
from typing import Any

from ..platform.sections import FANIN_MAX

E_MIN = 1e-3  # the bisection's floor: a round 1000 times its fluid time is not TCP
STEPS = 40
DECIMALS = 4  # e_f as the table holds it


def alltoall_spans(samples: list[dict[str, Any]]) -> tuple[int, dict[int, float]]:
    """N, the nodes of the ``alltoall`` rounds, and per size the median round time (each
    repetition's last flow)."""
    reps: dict[int, dict[int, float]] = defaultdict(dict)
    nodes: set[int] = set()
    for s in samples:
        if s.get("phase") != "efficiency" or s.get("pattern") != "alltoall":
            continue
        if s.get("quantity") != "flow":
            continue
        m, r = int(s["size_bytes"]), int(s["repetition"])
        reps[m][r] = max(reps[m].get(r, 0.0), float(s["value_s"]))
        nodes.update((int(s["src"]), int(s["dst"])))
    return len(nodes), {m: statistics.median(v.values()) for m, v in sorted(reps.items())}


def _predicted(doc: dict[str, Any], schedule: Any, e: float) -> float:
    """The makespan ``predict`` gives ``schedule`` under ``tcpflow`` on ``doc`` with e_f =
    ``e`` at every size (e = 1: as without fan-in), K = its ranks - 1."""
    from ..platform import platform_from_dict
    from ..prediction import predict

    d = copy.deepcopy(doc)
    n = schedule.num_ranks
    d["tcp"]["efficiency"]["fanin"] = {"peers": n - 1, "sizes": [1], "e": [e]}
    return predict(schedule, platform_from_dict(d), "tcpflow", record_messages=False).makespan_s


def written(e: float) -> tuple[float, str]:
    """What the fit writes of e: the table's value (4 decimals) and the comment's (3)."""
    return round(e, DECIMALS), f"{e:.3f}"


def _bisect(doc: dict[str, Any], schedule: Any, measured: float, lo: float, hi: float) -> float:
    """The e in [lo, hi] at which the prediction meets ``measured``, geometric bisection;
    predicted(lo) >= measured > predicted(hi). It stops before STEPS steps once every e
    left in [lo, hi] is written alike (:func:`written` is monotonic): the STEPS-step
    answer lies in every interval of the way, so what is written is the same, at a
    third of the predictions (each a median of noisy runs)."""
    for _ in range(STEPS):
        if written(lo) == written(hi):
            break
        mid = (lo * hi) ** 0.5
        if _predicted(doc, schedule, mid) >= measured:
            lo = mid
        else:
            hi = mid
    return hi


def fanin_section(doc: dict[str, Any], n: int, spans: dict[int, float]) -> tuple[dict, str]:
    """The ``fanin`` table for platform document ``doc`` (which has ``plogp``, ``network``
    and ``tcp.efficiency``) from the median round times ``spans`` of N = ``n`` nodes, and a
    comment: per size the measured median, the prediction without fan-in and e_f."""
    from ..schedules import collective

    sizes, values, cells = [], [], []
    for m, measured in spans.items():
        sched = collective("alltoall-basic-linear", n, m)
        base = _predicted(doc, sched, 1.0)
        if base == measured:
            e, why = 1.0, ""
        elif base > measured:
            # faster than the pair losses say: e_f above 1 takes them back
            if _predicted(doc, sched, FANIN_MAX) >= measured:
                e, why = FANIN_MAX, ", not reached above 1"
            else:
                e, why = _bisect(doc, sched, measured, 1.0, FANIN_MAX), ""
        elif _predicted(doc, sched, E_MIN) < measured:
            # the model serves these messages so that few nodes ever have two senders at
            # once (small messages leave their NIC in posting order): fan-in cannot say it
            e, why = 1.0, ", not reached by fan-in"
        else:
            e, why = _bisect(doc, sched, measured, E_MIN, 1.0), ""
        sizes.append(m)
        values.append(written(e)[0])
        cells.append(
            f"{m} B {measured * 1e3:.3f} ms (without fan-in {base / measured:.2f}x{why}) "
            f"e_f {written(e)[1]}"
        )
    note = f"fanin: all-to-all rounds of {n} nodes, median round time and e_f: " + "; ".join(cells)
    return {"peers": n - 1, "sizes": sizes, "e": values}, note
