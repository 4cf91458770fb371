"""``commodel calibrate``: every measurement the models need, in one mpirun, then the fit.

The parts run one after another on all ranks, each as its own campaign in the results
database (the same campaigns ``commodel measure ...`` writes):

========== ========= ============================================================
part       ranks     gives the platform file
========== ========= ============================================================
tcp        any       ``tcp``: RTO_min of every host
chain      >= 3      ``tcp.port_timeouts``: the timeouts of a pairwise exchange whose
                     steps follow each other, run first on fresh connections; fitted
                     where the network has ports between switches (tcpflow)
plogp      >= 2      ``plogp``: L, o_s(m), o_r(m), g(m), uni- and bidirectional
topology   >= 2      ``network``: which nodes share an uplink, its rate (crossbar or racks)
lmo        >= 3      ``lmo``: C_i, t_i, beta_ij
many-to-one >= 3     ``many_to_one``: escalation levels and frequencies
efficiency >= 2      ``tcp.efficiency``: e_x(m), e_d(m) of traffic both ways, e_f(m)
                     of fan-in from all-to-all rounds (>= 3; tcpflow)
wire       >= 3      ``network.overhead`` h, ``network.ack`` a: a message's bytes on
                     the wire, counted by the interfaces (3 nodes; tcpflow)
ports      >= 3      ``tcp.timeouts``: the fan-in and size from which bursts into one
                     node and all-to-all bursts time out (tcpflow); ``network.buffer``,
                     ``tcp.rto_rule: buffer``: the switch ports' buffers, from the
                     timeouts of bursts into one port (tcpflow, plogpt)
check      >= 2      ``tcp.model_error``: four collectives run for real and predicted
                     with the platform; widens every prediction's interval (tcpflow)
========== ========= ============================================================

A part that the rank count cannot run is skipped with a note. ``tree`` (PlogPT's binary tree
b(h), d(h), on 2^D ranks) is not a default part: ask for it with ``--parts``; ``topology``
and ``tree`` both give the ``network`` section, so take one of them. Running ``calibrate`` again on the same database continues: a part whose campaign
with the same options and rank count is complete is reused, an unfinished one (killed, or
failed) is resumed from its stored steps, so nothing measured is lost; ``fresh`` measures
everything again.

The options are the quick ones: enough repetitions for the fits, small enough that an
8-host cluster is calibrated in minutes. ``commodel measure`` runs any part at length.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import CommodelError
from . import efficiency
from .manytoone import spread_counts
from .registry import BY_NAME
from .unit import defaults

KiB = 1024
MiB = 1024 * KiB


@dataclass(frozen=True)
class Part:
    """One measurement of the calibration: its benchmark, options and procedure."""

    name: str
    min_ranks: int
    options: dict[str, Any]
    procedure: Callable[[dict[str, Any]], Any]
    power_of_two: bool = False
    default: bool = True  # run when --parts is not given


def _part(
    name: str,
    min_ranks: int,
    given: dict[str, Any],
    power_of_two: bool = False,
    default: bool = True,
) -> Part:
    """Part ``name`` of the registry's measurement of that name, its options from ``given``."""
    m = BY_NAME[name].measurement
    return Part(name, min_ranks, m.validate(given), m.procedure, power_of_two, default)


# The quick options are sized for 8 ranks, one a node. On more, the parts whose cost grows
# with the rank count are cut back to about the cost they have on 8 (on a cluster of 12 at
# 20 Mbit/s, LMO's 132 pairs, gathers from up to 12 ranks and all-to-all rounds of 11
# messages a node took 35, 51 and 48 s of a 229 s calibration).
QUICK_RANKS = 8


def lmo_reps(ranks: int) -> int:
    """LMO's repetitions: 5 on up to 8 ranks, fewer (at least 3, for a median) as the
    ordered pairs P(P - 1) it measures grow past 8's 56."""
    pairs = QUICK_RANKS * (QUICK_RANKS - 1)
    return max(3, min(5, round(5 * pairs / max(1, ranks * (ranks - 1)))))


def gather_counts(ranks: int) -> int:
    """How many process counts n many-to-one gathers from: 7, or on more than 8 ranks the
    most whose sum of n (the messages gathered per size and repetition) is at most 8's,
    and at least 3 (the smallest, a middle one and all)."""
    limit = sum(spread_counts(QUICK_RANKS, 7))
    for k in range(7, 3, -1):
        if sum(spread_counts(ranks, k)) <= limit:
            return k
    return 3


def round_budget(ranks: int) -> float:
    """Seconds of efficiency rounds per size, 3 on up to 8 ranks, in proportion to the
    P - 1 messages a node sends in an all-to-all round above (at least 1)."""
    return round(3.0 * min(1.0, (QUICK_RANKS - 1) / max(1, ranks - 1)), 2)


# On slow links (21 Mbit/s NICs, a backbone of 13 Mbit/s, 9 hosts) the calibration took
# 238 s, a third of it PLogP's halving of intervals between 64 and 256 KiB and the
# all-to-all rounds of 256 KiB: PLogP halves no more intervals once its roundtrip phase has
# taken PLOGP_BUDGET seconds (from the small sizes up, so the eager limit's step is kept),
# and the efficiency part measures no all-to-all size whose rounds would take more than
# ROUND_LIMIT seconds each (the fan-in table is then held at its largest size; scored on the
# dev draws with the 256 KiB rounds left out, the predictions moved by 1-2%;
# docs/measurement.md, *One command*).
PLOGP_BUDGET = 20.0
ROUND_LIMIT = 3.0


def parts(max_size: int, ranks: int = QUICK_RANKS) -> dict[str, Part]:
    """The calibration parts with their quick options for ``ranks`` ranks, by name, in the
    order they run."""
    k_m = max(10, (max_size - 1).bit_length())
    eff_sizes = [s for s in defaults(efficiency.Options)["sizes"] if s <= max_size] or [max_size]
    chosen = (
        _part("tcp", 1, {}),
        # first of the rounds between nodes: on connections as fresh as an application's
        _part("chain", 3, {"min_reps": 2}),
        _part(
            "plogp",
            2,
            {
                "max_size": max_size,
                "k_m": k_m,
                "max_reps_small": 20,
                "max_reps_large": 5,
                "bidirectional": True,
                "halving": 1 / 8,
                "bidirectional_sizes": "powers",
                "budget": PLOGP_BUDGET,
            },
        ),
        _part("topology", 2, {}),
        _part("lmo", 3, {"reps": lmo_reps(ranks), "triples": "cover"}),
        _part(
            "many-to-one",
            3,
            {
                "sizes": [(1 << i) * KiB for i in range(7)],
                "reps": 10,
                "counts": gather_counts(ranks),
            },
        ),
        _part(
            "efficiency",
            2,
            {
                "sizes": eff_sizes,
                "min_reps": 2,
                "max_reps": 8,
                "budget": round_budget(ranks),
                "round_limit": ROUND_LIMIT,
            },
        ),
        _part("wire", 3, {"reps": 2 if ranks > QUICK_RANKS else 3}),
        _part("ports", 3, {}),
        _part("check", 2, {}),
        # PlogPT's binary tree (2^D ranks): asked for by name, instead of topology
        _part("tree", 2, {"burst_bytes": 4 * MiB, "reps": 3}, power_of_two=True, default=False),
    )
    return {p.name: p for p in chosen}


# The parts one may ask for by name, and those calibrate runs when none are named.
PARTS = tuple(parts(MiB))
DEFAULT_PARTS = tuple(name for name, part in parts(MiB).items() if part.default)


def parse_parts(text: str) -> list[str]:
    """``tcp,plogp`` -> the names, checked; order as given."""
    names = [p.strip() for p in text.split(",") if p.strip()]
    unknown = [n for n in names if n not in PARTS]
    if unknown or not names:
        raise CommodelError(
            f"--parts: unknown part(s) {', '.join(unknown) or '(none given)'}; "
            f"choose from {', '.join(PARTS)}"
        )
    return names


def runnable(part: Part, ranks: int) -> str | None:
    """Why ``part`` cannot run on ``ranks`` ranks, or None."""
    if ranks < part.min_ranks:
        return f"needs at least {part.min_ranks} ranks"
    if part.power_of_two and ranks & (ranks - 1):
        return "needs a power of two ranks"
    return None


@dataclass(frozen=True)
class Decision:
    """What to do with one part: ``new``, ``resume`` campaign ``campaign``, ``reuse`` it,
    or ``skip`` (``why``)."""

    part: str
    action: str
    campaign: int | None = None
    why: str = ""


def decide(
    campaigns: Sequence[Any], chosen: Sequence[Part], ranks: int, fresh: bool
) -> list[Decision]:
    """Per part: reuse a complete campaign with the same options and ranks, resume the
    latest unfinished one, or measure anew (always anew when ``fresh``)."""
    from ..db import options_json

    out = []
    for part in chosen:
        why = runnable(part, ranks)
        if why is not None:
            out.append(Decision(part.name, "skip", why=why))
            continue
        same = [
            c
            for c in campaigns
            if c.benchmark == part.name
            and c.ranks == ranks
            and options_json(c.options) == options_json(part.options)
        ]
        if fresh or not same:
            out.append(Decision(part.name, "new"))
        elif same[-1].status == "complete":
            out.append(Decision(part.name, "reuse", same[-1].id))
        else:
            out.append(Decision(part.name, "resume", same[-1].id))
    return out


def run(
    db_path: str,
    chosen_names: Sequence[str],
    max_size: int,
    *,
    fresh: bool = False,
    progress: bool = True,
    command: str = "commodel calibrate",
    log: Callable[[str], None] | None = None,
) -> tuple[int, dict[str, Any] | None]:
    """Run the calibration on every rank (SPMD). Rank 0 returns ``(0, summary)`` with the
    campaign of every part; other ranks ``(code, None)``. Raises CommodelError on rank 0."""
    from ..db import ResultsDB
    from .common import import_mpi, run_campaign

    MPI = import_mpi()
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    table = parts(max_size, size)
    chosen = [table[n] for n in chosen_names]

    plan: Any = None
    if rank == 0:
        try:
            with ResultsDB(db_path) as db:
                plan = decide(db.campaigns(), chosen, size, fresh)
        except CommodelError as exc:
            plan = exc
    plan = comm.bcast(plan, root=0)
    if isinstance(plan, CommodelError):
        if rank == 0:
            raise plan
        return 2, None

    say = log if (log is not None and rank == 0) else (lambda text: None)
    elapsed: dict[str, float] = {}
    for i, (part, decision) in enumerate(zip(chosen, plan), start=1):
        head = f"calibrate [{i}/{len(chosen)}] {part.name}"
        if decision.action == "skip":
            say(f"{head}: skipped ({decision.why} on {size})")
            continue
        if decision.action == "reuse":
            say(f"{head}: campaign {decision.campaign} is complete, reused")
            continue
        say(
            f"{head}: resuming campaign {decision.campaign}"
            if decision.action == "resume"
            else f"{head}: measuring"
        )
        start = time.monotonic()
        code, _ = run_campaign(
            part.name,
            part.options,
            db_path,
            part.procedure(part.options),
            min_ranks=part.min_ranks,
            resume=decision.action == "resume",
            resume_id=decision.campaign,
            command=f"{command} (part {part.name})",
            progress=progress,
        )
        if code != 0:  # rank 0 raises instead
            return code, None
        elapsed[part.name] = time.monotonic() - start
    if rank != 0:
        return 0, None

    with ResultsDB(db_path, read_only=True) as db:
        final = decide(db.campaigns(), chosen, size, fresh=False)
    used = {d.part: d.campaign for d in final if d.action == "reuse"}
    missing = [d.part for d in final if d.action not in ("reuse", "skip")]
    if missing:  # pragma: no cover - run_campaign marks every finished part complete
        raise CommodelError(f"{db_path}: parts {missing} did not complete")
    return 0, {
        "campaigns": used,
        "skipped": {d.part: d.why for d in final if d.action == "skip"},
        "elapsed_s": elapsed,
        "ranks": size,
    }
