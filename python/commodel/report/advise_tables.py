"""The text of ``commodel advise`` (:func:`format_advice`): per communicator size P and
message size, the best algorithm, the runner-up, Open MPI's default and the choice; the
gather split's table where there is one. (``--verify``'s comparison is formatted by
:func:`commodel.advise.verify_runs.format_verified`, beside the arithmetic it reports.)"""

from __future__ import annotations

from typing import Any

from ..mpis import get as get_mpi
from ..units import format_duration, format_size
from .tables import format_table


def format_advice(adv: Any) -> str:
    """The table of :class:`commodel.advise.advice.Advice` (the report layer imports no
    ``advise``: that imports ``report``)."""

    def pct(x: float | None) -> str:
        return f"{100 * x:.1f}%" if x is not None else "-"

    def time(c) -> str:  # a prediction with timeouts carries a star
        if c is None or c.time_s is None:
            return "-"
        return format_duration(c.time_s) + ("*" if c.timeouts else "")

    rows = []
    for pt in adv.points:
        best, second, default = pt.best, pt.runner_up, pt.default
        chosen = pt.choice(adv.min_gain)
        rows.append(
            [
                pt.ranks,
                format_size(pt.size) if adv.collective != "barrier" else "-",
                f"{best.number} {best.name}" if best else "none",
                time(best),
                f"{second.number} {second.name}" if second else "-",
                time(second),
                pct(pt.margin),
                f"{default.number} {default.name}" if default else "-",
                time(default),
                pct(pt.gain),
                "default"
                if pt.keeps_default(adv.min_gain)
                else (f"{chosen.number} {chosen.name}" if chosen else "-"),
            ]
        )
    label = get_mpi(adv.mpi).label
    numbers = {
        "mpich": f"numbers in the order of MPIR_CVAR_{adv.collective.upper()}_INTRA_ALGORITHM",
        "intel-mpi": f"numbers as I_MPI_ADJUST_{adv.collective.upper()}'s presets",
    }.get(adv.mpi, "numbers as coll_tuned_<coll>_algorithm")
    unknown = " (unknown to commodel: Intel's tuning file)" if adv.mpi == "intel-mpi" else ""
    head = (
        f"{adv.collective} on platform {adv.platform}, model {adv.model}: predicted time of "
        f"{label}'s algorithms ({numbers})\ndefault: what "
        f"{label.rsplit(' ', 1)[0]} runs without a rules file{unknown}; gain: default / best - 1; chosen: the best\n"
        f"where the gain exceeds --min-gain ({adv.min_gain}), else the default"
    )
    if adv.cpu_stretch:
        head += (
            f"\ncpu: the ranks share {adv.cpu_cores} cores (platform `cpu` section): CPU work x "
            + ", ".join(f"{s:.3g} at P = {p}" for p, s in adv.cpu_stretch.items())
        )
    if adv.samples:
        head += (
            f"\nescalations: each time is the mean of {adv.samples} runs with the incast rule "
            "(platform `many_to_one` section; --samples)"
        )
    lines = [
        head,
        "",
        format_table(
            [
                "P",
                "size",
                "best",
                "time",
                "runner-up",
                "time",
                "margin",
                "default",
                "time",
                "gain",
                "chosen",
            ],
            rows,
            align="rrlrlrrlrrl",
        ),  # fmt: skip
    ]
    timed = [c for pt in adv.points for c in (*pt.candidates, pt.default) if c and c.timeouts]
    delayed = [f"{n} {a}" for n, a in sorted({(c.number, c.name) for c in timed})]
    if any(pt.split and pt.split.timeouts for pt in adv.points):
        delayed.append("the split")
    if delayed and not adv.samples:
        lines.append(
            "*: with the retransmission timeouts the model predicts (`predict --json` lists "
            "them as rto_events), for " + ", ".join(delayed)
        )
    elif delayed:
        lines.append("*: the mean of runs of which some escalated (the incast rule)")
    missing = adv.missing()
    if missing:
        lines.append("")
        lines.append("no generator (not predicted): " + ", ".join(f"{n} {a}" for n, a in missing))
    notes: dict[tuple[int, str], str] = {}
    for pt in adv.points:
        for c in pt.candidates:
            if c.generator and c.time_s is None:
                notes.setdefault((c.number, c.name), f"P={pt.ranks} {c.note}")
    for (n, a), note in sorted(notes.items()):
        lines.append(f"not predicted where the generator refuses, e.g. {n} {a}: {note}")
    splits = [pt for pt in adv.points if pt.split is not None]
    if splits:
        rows = []
        for pt in splits:
            sp, best = pt.split, pt.best
            linear = next((c for c in pt.candidates if c.number == 1), None)
            plain = linear.time_s if linear else None
            rows.append(
                [
                    pt.ranks,
                    format_size(pt.size),
                    format_size(int(sp.m1)) if sp.m1 is not None else "-",
                    format_size(int(sp.small)) if sp.small is not None else "-",
                    sp.k,
                    time(sp) if sp.time_s is not None else sp.note or "-",
                    format_duration(plain) if plain is not None else "-",
                    f"{plain / sp.time_s:.2f}" if plain and sp.time_s else "-",
                    f"{best.time_s / sp.time_s:.2f}" if best and sp.time_s else "-",
                ]
            )
        lines += [
            "",
            "gather split (Lastovetsky): k linear sub-gathers of M/k bytes, an MPI_Barrier "
            "between two, where the\nplatform's many_to_one section predicts escalations "
            "(M1(P) <= M < M2): k = ceil(M / Ms), Ms the\nlargest measured size without them "
            "at any n <= P; or --splits K. No Open MPI algorithm, so not\nin the rules file: "
            "call MPI_Gather k times, with MPI_Barrier between",
            format_table(
                ["P", "size", "M1", "Ms", "k", "time", "linear", "linear/split", "best/split"],
                rows,
                align="rrrrrrrrr",
            ),
        ]
    return "\n".join(lines)
