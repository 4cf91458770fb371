"""Predict every Open MPI algorithm of a collective and pick the fastest per size.

For each communicator size P and message size m, every Open MPI 4.1.4 algorithm of the
collective that commodel has a generator for is generated (:func:`commodel.collective`)
and predicted on the platform (:func:`commodel.predict`); the fastest is chosen, the
runner-up and the predicted margin (runner-up time / best time - 1) are kept. An algorithm
without a generator, or one whose generator refuses (P, m) (e.g. ``rabenseifner`` below
2^floor(log2 P) bytes), is listed with the reason and never chosen.

Open MPI's own choice at (P, m), its fixed decision (:func:`commodel.openmpi.default_algorithm`),
is predicted too: its candidate, or, where the default runs an algorithm unsegmented or
as a single chain that the candidate runs segmented or as 4 chains (bcast chain and
pipeline, gather linear_sync), that algorithm as the default runs it. The advice departs
from the default only where the predicted gain t_default / t_best - 1 exceeds ``min_gain``
at the message size (:class:`MinGain`, :meth:`Point.choice`; by default 30% below 32 KiB,
5% from it); 0 always takes the predicted best. Where the default has no
prediction, the best is taken.

:func:`rules_from_advice` turns the choices into Open MPI rules: per P one communicator
rule, and a message rule wherever the chosen algorithm changes, starting at the rule
message size (:func:`~commodel.advise.rules.rule_message_size`) of the first size where the
new algorithm wins; the first rule is at 0.

Gather also gets Lastovetsky and O'Flynn's split (section 7) where the platform predicts
many-to-one escalations: a platform with a ``many_to_one`` section (``commodel calibrate``
writes it from 3 nodes on) gives M1(P), the smallest size from which escalations are seen,
and M2, the size from which they have stopped; a gather of M bytes per rank in that medium
range, M1 <= M < M2, becomes k = ceil(M / Ms) linear sub-gathers of M/k bytes
(:func:`commodel.lmo.gather_split`), Ms the largest measured size below M1(n) for every
measured n <= P (none: no split; a section without its sizes: M1(P), as the paper), with
a barrier between two sub-gathers,
predicted with the ``gather-split`` generator like the plain algorithms (:class:`Split`).
Without the barrier each sender's eager sub-messages leave back to back and the root sees
the whole incast again (docs/advise.md, *Gather split*). Over Open MPI's TCP transport M2 is the eager limit:
a larger message waits for the root's receive (docs/models.md). It is no Open MPI algorithm, so no
rules file can name it: the application calls MPI_Gather k times, with MPI_Barrier between.

Where the gather's platform has escalation levels (a ``many_to_one`` section with ``levels``)
and the model is a message-level one, every gather time, the split's included, is the mean
of :data:`ESCALATION_SAMPLES` runs with the incast rule (:func:`commodel.lmo.incast.
predict_samples`): Lastovetsky's f_i(n, M) x t_i on each of the schedule's many-to-one
episodes. So an algorithm that sends medium messages to one rank at once (basic_linear, the
second segments of linear_sync) pays its expected escalations, the split does not (its
sub-messages are below M1), and the split's gain over the plain linear gather is predicted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from ..errors import CommodelError
from ..mpis import Mpi
from ..mpis import get as get_mpi
from ..openmpi import ALGORITHMS, FANINOUT, SEGSIZE, rule_message_size
from .rules import COLLECTIVE_IDS, CollectiveRules, CommRule, MessageRule

if TYPE_CHECKING:
    from ..platform import Platform

ROOTED = ("bcast", "gather", "scatter")


@dataclass
class Candidate:
    number: int  # Open MPI's algorithm number
    name: str  # Open MPI's algorithm name
    generator: str | None
    time_s: float | None = None
    note: str = ""  # why there is no prediction
    # messages the prediction delays by a retransmission timeout (tail drops at full ports,
    # tcp.rto_rule buffer), or the runs with an escalation where the time is a mean of runs
    timeouts: int = 0


# Gather on a platform whose ``many_to_one`` section has escalation levels: each time is the
# mean of this many runs with the incast rule (seeds 0, 1, ...; docs/models.md, "TCP incast
# as a stochastic rule").
ESCALATION_SAMPLES = 32


@dataclass(frozen=True)
class MinGain:
    """The predicted gain over Open MPI's default below which the advice keeps the default:
    ``small`` for message sizes below ``split`` bytes, ``large`` from it (0: always the
    predicted best)."""

    small: float
    large: float
    split: int = 32768

    @classmethod
    def of(cls, value: MinGain | float | tuple[float, float]) -> MinGain:
        """A margin for every size from one fraction, or (below 32 KiB, from 32 KiB)."""
        if isinstance(value, MinGain):
            return value
        if isinstance(value, tuple):
            return cls(float(value[0]), float(value[1]))
        return cls(float(value), float(value))

    def at(self, size: int) -> float:
        return self.small if size < self.split else self.large

    def __str__(self) -> str:
        if self.small == self.large:
            return f"{100 * self.small:g}%"
        return (
            f"{100 * self.small:g}% below {self.split // 1024} KiB, {100 * self.large:g}% from it"
        )


# The smallest predicted gain over Open MPI's default for which advise departs from it, below
# and from 32 KiB: the smallest margins (5% steps) at which the advice was slower than the
# default beyond the spread at no point, over the 21 verification data sets of two-rack-8 and
# two-rack-16 (docs/advise.md, "Departing from the default").
MIN_GAIN = MinGain(0.30, 0.05)


@dataclass
class Split:
    """A gather as ``k`` linear sub-gathers, a barrier between two: escalations from ``m1``
    bytes, M1(P), none seen at ``small`` bytes, the bound on M/k (both None where the user
    chose k)."""

    k: int
    m1: float | None
    small: float | None = None
    time_s: float | None = None
    note: str = ""
    timeouts: int = 0


@dataclass
class Point:
    ranks: int
    size: int
    candidates: list[Candidate] = field(default_factory=list)
    split: Split | None = None
    # Open MPI's fixed decision at (P, m), predicted as it runs (None: not known)
    default: Candidate | None = None

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

    @property
    def gain(self) -> float | None:
        """Predicted default time / best time - 1 (None without both predictions)."""
        b, d = self.best, self.default
        if b is None or d is None or d.time_s is None or not b.time_s:
            return None
        return d.time_s / b.time_s - 1.0

    def choice(self, min_gain: MinGain | float = 0.0) -> Candidate | None:
        """The algorithm the advice runs: the predicted best where its gain over the
        default exceeds ``min_gain`` at this size (or the default has no prediction), else
        the default."""
        gain, margin = self.gain, MinGain.of(min_gain).at(self.size)
        if gain is None or margin <= 0 or gain > margin:
            return self.best
        return self.default

    def keeps_default(self, min_gain: MinGain | float = 0.0) -> bool:
        """Whether the advice runs Open MPI's default (as its fixed decision runs it)."""
        return self.default is not None and self.choice(min_gain) is self.default


@dataclass
class Advice:
    collective: str
    platform: str
    model: str
    points: list[Point]
    min_gain: MinGain | float = 0.0
    # C of the platform's ``cpu`` section: the ranks share C cores (None: a core each)
    cpu_cores: int | None = None
    # s = P / C per communicator size P where the ranks share the cores (Platform.cpu_stretch)
    cpu_stretch: dict[int, float] = field(default_factory=dict)
    # gather: runs of the incast rule per prediction (the mean is the time; 0: none)
    samples: int = 0
    # the MPI advised (commodel.mpis.NAMES)
    mpi: str = "openmpi-4.1"

    def __post_init__(self) -> None:
        self.min_gain = MinGain.of(self.min_gain)

    def missing(self) -> list[tuple[int, str]]:
        """Algorithms of the collective (of the MPI advised) that have no generator."""
        return [(n, a) for n, a, g in get_mpi(self.mpi).algorithms[self.collective] if g is None]


def check_collective(collective: str, mpi: Mpi | None = None) -> str:
    if mpi is not None and mpi.name != "openmpi-4.1":
        if collective not in ALGORITHMS:
            check_collective(collective)
        mpi.check_collective(collective)
        return collective
    if collective not in ALGORITHMS:
        raise CommodelError(
            f"--collective: unknown collective {collective[:40]!r}; choose one of "
            + ", ".join(sorted(ALGORITHMS))
        )
    return collective


def _predict_candidate(
    collective: str,
    root: int,
    segsize: dict | None,
    faninout: dict | None,
    samples: int,
    plat: Platform,
    model: str,
    item: tuple[int, int, int, str, int, bool],
) -> tuple[float | None, str, int]:
    """(time, "", timeouts) of one algorithm at (P, m), or (None, why the generator refused,
    0); ``as_default``: unsegmented and one chain, as Open MPI's fixed decision runs it.
    timeouts: the messages a retransmission timeout delays (the runs with an escalation
    where the time is the mean of ``samples`` runs). Module-level, so that an MPI worker
    can be sent it (:mod:`commodel.parallel`)."""
    from ..errors import CollectiveError
    from ..lmo.incast import predict_samples
    from ..prediction import predict

    p, m, number, gen, k, as_default = item
    try:
        sched = candidate_schedule(
            collective, number, gen, p, m, root, k, as_default, segsize, faninout
        )
    except CollectiveError as exc:
        return None, _first_line(exc), 0
    if samples:
        runs = predict_samples(sched, plat, model, samples)
        return runs.mean_s, "", runs.escalated_runs
    pred = predict(sched, plat, model=model, record_messages=False)
    return pred.makespan_s, "", len(pred.rto_events)


def advise(
    platform: Any,
    collective: str,
    ranks: list[int],
    sizes: list[int],
    model: str | None = None,
    root: int = 0,
    jobs: int | None = None,
    splits: int | None = None,
    min_gain: MinGain | float | tuple[float, float] = MIN_GAIN,
    samples: int | None = None,
    mpi: str = "openmpi-4.1",
) -> Advice:
    """Predict every algorithm with a generator at every (P, m), up to ``jobs`` at once
    (:func:`commodel.parallel.map_ordered`), and Open MPI's default; see the module text.
    Without ``model``: the platform's default (:func:`commodel.platform.default_model`).
    ``splits`` (gather): predict the split into that many sub-gathers at every size,
    whatever M1 says. ``min_gain``: the predicted gain over the default below which the
    advice keeps the default, one fraction or (below 32 KiB, from 32 KiB) (0: always the
    predicted best). ``samples`` (gather on a
    platform with escalation levels, any model but loggops): each time is the mean of that
    many runs with the incast rule (default :data:`ESCALATION_SAMPLES`; 0: one run
    without it). ``mpi``: whose algorithms and default decision (:mod:`commodel.mpis`)."""
    from ..parallel import map_ordered
    from ..platform import Platform, default_model, load_platform, model_spec
    from ..schedule_cost import check_advice_cost, schedule_units

    the_mpi = get_mpi(mpi)
    check_collective(collective, the_mpi)
    if splits is not None and (collective != "gather" or splits < 1):
        raise CommodelError(f"--splits {splits}: only gather splits, into K >= 2 sub-gathers")
    plat = platform if isinstance(platform, Platform) else load_platform(platform)
    if model is None:
        model = default_model(plat)
    min_gain = MinGain.of(min_gain)
    if not (min_gain.small >= 0 and min_gain.large >= 0):
        raise CommodelError(
            f"--min-gain {min_gain.small:g},{min_gain.large:g}: expected fractions >= 0 "
            "(0.2 is 20%)"
        )
    if collective == "barrier":
        sizes = [0]
    if samples is not None and samples < 0:
        raise CommodelError(f"--samples {samples}: expected a number of runs >= 0")
    m2o = plat.sections.get("many_to_one") or {}
    if collective != "gather" or not m2o.get("levels") or model_spec(model).name == "loggops":
        samples = 0
    elif samples is None:
        samples = ESCALATION_SAMPLES
    if collective in ROOTED and not all(0 <= root < p for p in ranks):
        raise CommodelError(
            f"--root {root} is not a rank of every communicator size in --ranks "
            f"({', '.join(map(str, ranks))})"
        )

    points = [Point(p, m) for p in ranks for m in sizes]
    todo = []
    for point in points:
        for number, name, gen in the_mpi.algorithms[collective]:
            cand = Candidate(number, name, gen)
            point.candidates.append(cand)
            if gen is None:
                cand.note = "no generator"
            else:
                todo.append((cand, (point.ranks, point.size, number, gen, 2, False)))
        if point.ranks >= 2:
            number = the_mpi.default_algorithm(collective, point.ranks, point.size)
            found = [c for c in point.candidates if c.number == number]
            cand = (
                found[0] if found else Candidate(number, the_mpi.label_of(collective, number), None)
            )
            if cand.generator and runs_otherwise_as_default(collective, number, the_mpi):
                cand = Candidate(number, cand.name, cand.generator)
                todo.append((cand, (point.ranks, point.size, number, cand.generator, 2, True)))
            point.default = cand
        if collective == "gather":
            if splits is not None and splits > 1:
                point.split = Split(splits, None)
            else:
                point.split = split_of(plat, point.ranks, point.size)
            if point.split is not None:
                item = (point.ranks, point.size, 0, "gather-split", point.split.k, False)
                todo.append((point.split, item))
    task = partial(
        _predict_candidate,
        collective,
        root,
        the_mpi.segsize,
        the_mpi.faninout,
        samples,
        plat,
        model,
    )
    # before any schedule is built
    check_advice_cost(collective, [item for _, item in todo], samples, the_mpi.segsize)
    # the largest schedules first (list scheduling's longest-first order; results in order)
    outcomes = map_ordered(
        task,
        [item for _, item in todo],
        jobs,
        cost=lambda it: schedule_units(
            collective, it[2], it[0], it[1], it[4], it[5], the_mpi.segsize
        ),
    )
    for (cand, _), (time_s, note, timeouts) in zip(todo, outcomes):
        cand.time_s, cand.note, cand.timeouts = time_s, note, timeouts
    name = getattr(plat, "name", None) or str(platform)
    cpu = plat.sections.get("cpu")
    stretch = {p: plat.cpu_stretch(p) for p in sorted(set(ranks)) if plat.cpu_stretch(p) > 1}
    return Advice(
        collective,
        str(name),
        model,
        points,
        min_gain,
        cpu.cores if cpu else None,
        stretch,
        samples,
        the_mpi.name,
    )


def candidate_schedule(
    collective: str,
    number: int,
    gen: str,
    ranks: int,
    size: int,
    root: int = 0,
    splits: int = 2,
    as_default: bool = False,
    segsize: dict | None = None,
    faninout: dict | None = None,
) -> Any:
    """The schedule of Open MPI algorithm ``number`` (generator ``gen``) at (P, m) as a
    forced run and our rules file run it (:data:`~commodel.openmpi.SEGSIZE`, ``FANINOUT``),
    or with ``as_default`` as the fixed decision runs it: unsegmented, one chain."""
    from ..schedules import collective as generate

    segsize = SEGSIZE if segsize is None else segsize
    faninout = FANINOUT if faninout is None else faninout
    seg = segsize.get((collective, number))
    fan = None
    if as_default:
        seg, fan = (
            (max(size, 1) if seg else None),
            (1 if faninout.get((collective, number)) else None),
        )
    return generate(gen, ranks, size, root=root, segment=seg, splits=splits, fanout=fan)


def alike_classes(
    collective: str, ranks: int, size: int, numbers: Any, root: int = 0, mpi: str = "openmpi-4.1"
) -> list[frozenset[int]]:
    """The algorithms among ``numbers`` whose schedules at (P, m) are the same, in classes
    of two or more: Open MPI runs one function for them there (allreduce segmented_ring
    without a segment size is its ring; allgather neighbor with an odd P falls back to ring,
    recursive_doubling with P not a power of two to bruck), so what separates their forced
    times is the difference between mpiruns. Algorithms without a generator, or whose
    generator refuses (P, m), are in no class."""
    from ..errors import CollectiveError

    gens = {n: g for n, _, g in get_mpi(mpi).algorithms[collective] if g is not None}
    by_goal: dict[str, set[int]] = {}
    for n in sorted(set(numbers)):
        if n not in gens:
            continue
        try:
            the = get_mpi(mpi)
            sched = candidate_schedule(
                collective, n, gens[n], ranks, size, root, 2, False, the.segsize, the.faninout
            )
            goal = sched.to_goal()
        except CollectiveError:
            continue
        by_goal.setdefault(goal, set()).add(n)
    return [frozenset(c) for c in by_goal.values() if len(c) > 1]


def ran(
    collective: str, ranks: int, size: int, matrix: Any, root: int = 0, mpi: str = "openmpi-4.1"
) -> list[int]:
    """The algorithms whose schedule at (P, m), as our rules file runs them, sends what
    ``matrix`` counts: [src][dst] = (messages, bytes) of one call, as Open MPI's
    pml/monitoring counted it, or the bytes as the kernel counted them (messages None:
    headers allowed; :func:`commodel.measure.traffic.traffic_fits`). One call proves which
    algorithm ran when one class of alike algorithms matches."""
    from ..errors import CollectiveError
    from ..measure.traffic import schedule_traffic, traffic_fits

    the = get_mpi(mpi)
    out = []
    for n, _, gen in the.algorithms[collective]:
        if gen is None:
            continue
        try:
            sched = candidate_schedule(
                collective, n, gen, ranks, size, root, 2, False, the.segsize, the.faninout
            )
        except CollectiveError:
            continue
        if traffic_fits(schedule_traffic(sched), matrix):
            out.append(n)
    return out


def runs_default_call(collective: str, point: Point, chosen: Candidate, fixed: int | None) -> bool:
    """Whether our rules run Open MPI's default decision's own call at ``point``: the advice
    kept the default (its rule names the algorithm with faninout 0 and segsize 0), or chose
    the default's algorithm (``fixed``), which the rule passes the same arguments."""
    if chosen is point.default:
        return True
    return chosen.number == fixed and not runs_otherwise_as_default(collective, chosen.number)


def runs_otherwise_as_default(collective: str, number: int, mpi: Mpi | None = None) -> bool:
    """Whether Open MPI's fixed decision (faninout 0, segsize 0) runs the algorithm other
    than our candidate of it does (:data:`~commodel.openmpi.SEGSIZE`, ``FANINOUT``)."""
    seg, fan = (SEGSIZE, FANINOUT) if mpi is None else (mpi.segsize, mpi.faninout)
    return (collective, number) in seg or (collective, number) in fan


def split_of(plat: Any, ranks: int, size: int) -> Split | None:
    """The gather split at (P, M) where the platform's ``many_to_one`` section predicts
    escalations: medium messages, M1(P) <= M < M2 (M2 null: no end seen), P >= 3; None
    otherwise."""
    from ..lmo.closed_forms import _interpolate, gather_split

    m2o = getattr(plat, "sections", {}).get("many_to_one")
    if not m2o or ranks < 3:
        return None
    m1 = _interpolate(m2o.get("n", []), m2o.get("M1", []), ranks)
    if m1 is None or m1 <= 0 or size < m1:
        return None
    m2 = m2o.get("M2")
    if m2 is not None and size >= m2:  # large: the escalations have stopped
        return None
    # Our fit's M1(n) is the smallest measured size that escalated with n processes, from 20
    # repetitions or so: a size that escalated with any count up to P is not safe for P
    # (on two-rack-16, 4 KiB escalated once in 20 at n = 15 and never at n = 16, and 4 sub-
    # gathers of 4 KiB on 16 ranks took 195 ms where the plain gather of 16 KiB took 109).
    # The largest measured size below all of them is the largest known to stay small. A
    # hand-written section without sizes: the paper's M/k <= M1(P).
    measured = sorted(int(s) for s in m2o.get("sizes") or [])
    seen = [
        float(v)
        for n, v in zip(m2o.get("n", []), m2o.get("M1", []))
        if v is not None and n <= ranks
    ]
    bound = min([m1, *seen])
    small = max((s for s in measured if s < bound), default=None) if measured else m1
    if small is None:  # escalations from the smallest measured size on: no safe size known
        return None
    k = gather_split(size, int(small))
    return Split(k, m1, small) if k > 1 else None


def _first_line(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:100]


def rules_from_advice(advices: list[Advice]) -> list[CollectiveRules]:
    """One rules table per advised collective (see the module text)."""
    tables = []
    for adv in advices:
        picks: dict[int, list[tuple[int, int, bool]]] = {}
        for pt in adv.points:
            chosen = pt.choice(adv.min_gain)
            if chosen is not None:
                entry = (pt.size, chosen.number, pt.keeps_default(adv.min_gain))
                picks.setdefault(pt.ranks, []).append(entry)
        table = rules_table(adv.collective, picks)
        if table is not None:
            tables.append(table)
    return tables


def rules_table(
    collective: str, picks: dict[int, list[tuple[int, int, bool]]]
) -> CollectiveRules | None:
    """The rules table of ``collective`` naming, per communicator size P, the algorithm of
    each picked (size m, algorithm, as the default): from m on (Open MPI's message size of
    m, :func:`~commodel.openmpi.rule_message_size`; the first rule from 0) that algorithm,
    with our candidate's faninout and segment size (:data:`~commodel.openmpi.FANINOUT`,
    ``SEGSIZE``), or where it stands for the default with faninout 0 and segsize 0, the call
    of the fixed decision. A pick equal to the one before adds no rule. None: no pick."""
    table = CollectiveRules(COLLECTIVE_IDS[collective])
    for p in sorted(picks):
        comm = CommRule(p)
        for size, number, as_default in sorted(picks[p]):
            if as_default:
                seg = fan = 0
            else:
                seg = SEGSIZE.get((collective, number), 0)
                fan = FANINOUT.get((collective, number), 0)
            last = comm.rules[-1] if comm.rules else None
            if last and (last.algorithm, last.faninout, last.segsize) == (number, fan, seg):
                continue
            start = rule_message_size(collective, size, p) if comm.rules else 0
            comm.rules.append(MessageRule(start, number, fan, seg))
        if comm.rules:
            table.comm_rules.append(comm)
    return table if table.comm_rules else None


def mpirun_line(path: str, mpi: str = "openmpi-4.1") -> str:
    """The launcher line with which ``mpi`` uses the rules file at ``path``: Open MPI's
    dynamic rules options (5.0: with coll/han off, so that tuned's rules fire whatever the
    number of ranks per host), MPICH's JSON tuning file variable, Intel MPI's settings file
    sourced by the shell (hydra passes the environment to every rank)."""
    import shlex

    if mpi == "intel-mpi":
        return f". {shlex.quote(path)} && mpiexec ..."
    if mpi == "mpich":
        return f"mpiexec -genv MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE {shlex.quote(path)} ..."
    han = "--mca coll ^han " if mpi == "openmpi-5.0" else ""
    return (
        f"mpirun {han}--mca coll_tuned_use_dynamic_rules 1 "
        f"--mca coll_tuned_dynamic_rules_filename {shlex.quote(path)} ..."
    )


def advice_picks(adv: Advice) -> dict[int, list[tuple[int, int]]]:
    """Per communicator size P, (size m, algorithm number) at each size advised: the chosen
    algorithm, 0 where the advice keeps the MPI's default."""
    picks: dict[int, list[tuple[int, int]]] = {}
    for pt in adv.points:
        chosen = pt.choice(adv.min_gain)
        if chosen is not None:
            picks.setdefault(pt.ranks, []).append((pt.size, chosen.number))
    if not any(n for rules in picks.values() for _m, n in rules):
        raise CommodelError("advise: no algorithm could be predicted, no rules to write")
    return picks


def intel_settings_from_advice(adv: Advice) -> str:
    """Intel MPI's settings file for the advice's choices: ``I_MPI_ADJUST_<COLL>`` with a
    size range per chosen preset and communicator size (:func:`commodel.mpis.intelmpi.
    adjust_value`)."""
    from ..mpis.intelmpi import adjust_value, settings_text

    picks = advice_picks(adv)
    header = (
        f"commodel advise --mpi intel-mpi: {adv.collective} on {adv.platform} "
        f"(model {adv.model}) for {', '.join(map(str, picks))} ranks; read it with "
        "`. FILE` before mpiexec"
    )
    return settings_text(adv.collective, adjust_value(adv.collective, picks), header)


def mpich_rules_from_advice(adv: Advice, builtin: dict) -> dict:
    """MPICH's JSON tuning file for the advice's choices (:func:`commodel.mpis.mpich.
    rules_json`): per P, from each size on, the chosen algorithm (where the advice keeps the
    default, MPICH's default's algorithm)."""
    from ..mpis.mpich import rules_json

    picks = {p: [(m, n) for m, n in rules if n] for p, rules in advice_picks(adv).items()}
    return rules_json(adv.collective, {p: r for p, r in picks.items() if r}, builtin)
