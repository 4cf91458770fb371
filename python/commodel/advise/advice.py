"""Predict every Open MPI algorithm of a collective and pick the fastest per size.

For each communicator size P and message size m, every Open MPI 4.1.4 algorithm of the
collective that commodel has a generator for is generated (:func:`commodel.collective`)
and predicted on the platform (:func:`commodel.predict`); the fastest is chosen, the
runner-up and the predicted margin (runner-up time / best time - 1) are kept. An algorithm
without a generator, or one whose generator refuses (P, m) (e.g. ``rabenseifner`` below
2^floor(log2 P) bytes), is listed with the reason and never chosen.

:func:`rules_from_advice` turns the choices into Open MPI rules: per P one communicator
rule, and a message rule wherever the chosen algorithm changes, starting at the rule
message size (:func:`~commodel.advise.rules.rule_message_size`) of the first size where the
new algorithm wins; the first rule is at 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import CommodelError
from .rules import (
    ALGORITHMS,
    COLLECTIVE_IDS,
    CollectiveRules,
    CommRule,
    MessageRule,
    rule_message_size,
)

# Segment sizes the rules file passes with an algorithm, so that Open MPI runs what the
# generator predicted: bcast-pipeline's default 8 KiB segments, gather-linear-sync's
# default 1 KiB first segment. Everything else unsegmented (0).
SEGSIZE = {("bcast", 3): 8192, ("gather", 3): 1024}

# Fan-in/out the rules file passes with an algorithm: Open MPI 4.1.4's bcast chain takes
# its number of chains from the rule (a forced run: coll_tuned_bcast_algorithm_chain_fanout,
# 4), and 0 would make it a single chain; bcast-chain predicts 4 chains. Everything else 0.
FANINOUT = {("bcast", 2): 4}

ROOTED = ("bcast", "gather", "scatter")


@dataclass
class Candidate:
    number: int  # Open MPI's algorithm number
    name: str  # Open MPI's algorithm name
    generator: str | None
    time_s: float | None = None
    note: str = ""  # why there is no prediction


@dataclass
class Point:
    ranks: int
    size: int
    candidates: list[Candidate] = field(default_factory=list)

    def ranked(self) -> list[Candidate]:
        return sorted(
            (c for c in self.candidates if c.time_s is not None),
            key=lambda c: (c.time_s, c.number),
        )

    @property
    def best(self) -> Candidate | None:
        r = self.ranked()
        return r[0] if r else None

    @property
    def runner_up(self) -> Candidate | None:
        r = self.ranked()
        return r[1] if len(r) > 1 else None

    @property
    def margin(self) -> float | None:
        """Predicted runner-up time / best time - 1."""
        b, r = self.best, self.runner_up
        if b is None or r is None or not b.time_s:
            return None
        return r.time_s / b.time_s - 1.0


@dataclass
class Advice:
    collective: str
    platform: str
    model: str
    points: list[Point]

    def missing(self) -> list[tuple[int, str]]:
        """Open MPI algorithms of the collective that have no generator."""
        return [(n, a) for n, a, g in ALGORITHMS[self.collective] if g is None]


def check_collective(collective: str) -> str:
    if collective not in ALGORITHMS:
        raise CommodelError(
            f"--collective: unknown collective {collective[:40]!r}; choose one of "
            + ", ".join(sorted(ALGORITHMS))
        )
    return collective


def advise(
    platform: Any,
    collective: str,
    ranks: list[int],
    sizes: list[int],
    model: str | None = None,
    root: int = 0,
    jobs: int | None = None,
) -> Advice:
    """Predict every algorithm with a generator at every (P, m), up to ``jobs`` at once
    (:func:`commodel.parallel.map_ordered`); see the module text. Without ``model``: the
    platform's default (:func:`commodel.platform.default_model`)."""
    from ..errors import CollectiveError
    from ..parallel import map_ordered
    from ..platform import Platform, default_model, load_platform
    from ..prediction import predict
    from ..schedules import collective as generate

    check_collective(collective)
    plat = platform if isinstance(platform, Platform) else load_platform(platform)
    if model is None:
        model = default_model(plat)
    if collective == "barrier":
        sizes = [0]
    if collective in ROOTED and not all(0 <= root < p for p in ranks):
        raise CommodelError(
            f"--root {root} is not a rank of every communicator size in --ranks "
            f"({', '.join(map(str, ranks))})"
        )

    def predict_candidate(item: tuple[int, int, int, str]) -> tuple[float | None, str]:
        """(time, "") of one algorithm at (P, m), or (None, why the generator refused)."""
        p, m, number, gen = item
        try:
            sched = generate(gen, p, m, root=root, segment=SEGSIZE.get((collective, number)))
        except CollectiveError as exc:
            return None, _first_line(exc)
        return predict(sched, plat, model=model, record_messages=False).makespan_s, ""

    points = [Point(p, m) for p in ranks for m in sizes]
    todo = []
    for point in points:
        for number, name, gen in ALGORITHMS[collective]:
            cand = Candidate(number, name, gen)
            point.candidates.append(cand)
            if gen is None:
                cand.note = "no generator"
            else:
                todo.append((cand, (point.ranks, point.size, number, gen)))
    outcomes = map_ordered(predict_candidate, [item for _, item in todo], jobs)
    for (cand, _), (time_s, note) in zip(todo, outcomes):
        cand.time_s, cand.note = time_s, note
    name = getattr(plat, "name", None) or str(platform)
    return Advice(collective, str(name), model, points)


def _first_line(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:100]


def rules_from_advice(advices: list[Advice]) -> list[CollectiveRules]:
    """One rules table per advised collective (see the module text)."""
    tables = []
    for adv in advices:
        by_p: dict[int, list[Point]] = {}
        for pt in adv.points:
            by_p.setdefault(pt.ranks, []).append(pt)
        table = CollectiveRules(COLLECTIVE_IDS[adv.collective])
        for p in sorted(by_p):
            comm = CommRule(p)
            for pt in sorted(by_p[p], key=lambda q: q.size):
                best = pt.best
                if best is None:
                    continue
                if comm.rules and comm.rules[-1].algorithm == best.number:
                    continue
                start = rule_message_size(adv.collective, pt.size, p) if comm.rules else 0
                seg = SEGSIZE.get((adv.collective, best.number), 0)
                fan = FANINOUT.get((adv.collective, best.number), 0)
                comm.rules.append(MessageRule(start, best.number, fan, seg))
            if comm.rules:
                table.comm_rules.append(comm)
        if table.comm_rules:
            tables.append(table)
    return tables


def mpirun_line(path: str) -> str:
    """The Open MPI options that make mpirun use the rules file at ``path``."""
    import shlex

    return (
        "mpirun --mca coll_tuned_use_dynamic_rules 1 "
        f"--mca coll_tuned_dynamic_rules_filename {shlex.quote(path)} ..."
    )
