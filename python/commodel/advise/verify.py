"""The arithmetic of ``advise --verify``: measured times of Open MPI's default decision, of our
rules file and of every forced algorithm, compared per (communicator size P, message size m).

* the samples of a run (:func:`run_samples`): with one mpirun, its repetitions; with
  several (``--rounds K``), the mean of each mpirun, since separate mpiruns of one algorithm
  differ by more than the repetitions inside one vary: the times below are then means of
  per-round means, and their intervals take the spread between mpiruns;
* speedup S = t_default / t_ours, the ratio of two independent sample means, with its 95%
  confidence interval by Fieller's theorem (:func:`fieller_ratio`; Student t quantile with
  Welch's degrees of freedom). The interval is unbounded when the mean of ours is not
  significantly above 0 (then ``None`` ends are reported);
* the run-to-run spread s (:func:`run_spread`): the median over the points of
  |t_ours / t_forced(chosen) - 1|, the measured difference between two mpiruns of the same
  algorithm (our rules file names the algorithm that the forced run of it ran);
* gap recovered = (t_default - t_ours) / (t_default - t_best), where t_best is the fastest
  forced algorithm; counted only where the default is slower than the best by more than s
  and the best is not the algorithm the default runs (then the gap is two mpiruns of one
  algorithm);
* algorithms alike at a point (:attr:`VerifiedPoint.alike`): two forced algorithms whose
  generated schedules there are the same are one function of Open MPI's (allreduce
  segmented_ring without a segment size runs ring); the difference of their forced times
  is run-to-run spread, so either counts as the other for (b) and (c);
* targets: (a) never slower than the default beyond the spread: fails at a point where the
  whole CI of S lies below 1 - s (without an interval: where S < 1 - s), unless our rules
  run the default decision's own call there (the advice kept the default: then ours and
  the default are two mpiruns of one call, reported, not judged); (b) where the default is not the best (gap above s),
  ours recover >= 50% of the gap; (c) the chosen algorithm's forced time is within 5% of
  the best in >= 80% of the points.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..stats import median

WITHIN = 0.05  # target (c): within 5% of the measured best
GAP_TARGET = 0.5  # target (b): at least half the gap recovered
SHARE_TARGET = 0.8  # target (c): in at least 80% of the points


def mean_var(xs: Sequence[float]) -> tuple[float, float, int]:
    """(mean, variance of the mean s^2/n, n); variance 0 for one sample."""
    n = len(xs)
    mean = sum(xs) / n
    if n < 2:
        return mean, 0.0, n
    var = sum((x - mean) ** 2 for x in xs) / (n - 1)
    return mean, var / n, n


def run_samples(rounds: Sequence[Sequence[float]]) -> list[float]:
    """The samples a run is judged by: the repetitions of its one mpirun, or the mean of each
    of its mpiruns (rounds with no sample left out)."""
    measured = [r for r in rounds if r]
    if len(measured) == 1:
        return list(measured[0])
    return [sum(r) / len(r) for r in measured]


def _t_quantile(df: float) -> float:
    from scipy.stats import t

    return float(t.ppf(0.975, df)) if df > 0 and math.isfinite(df) else 1.959963984540054


def fieller_ratio(
    num: Sequence[float], den: Sequence[float]
) -> tuple[float, float | None, float | None]:
    """mean(num) / mean(den) and its 95% Fieller interval (independent samples): the R with
    (a - R b)^2 <= t^2 (va + R^2 vb), a, b the means, va, vb their variances. ``None``
    ends where the interval is unbounded (b not significantly above 0) or a side has one
    sample only."""
    a, va, na = mean_var(num)
    b, vb, nb = mean_var(den)
    ratio = a / b
    if na < 2 or nb < 2:
        return ratio, None, None
    # Welch-Satterthwaite degrees of freedom of a - R b at R = ratio
    wa, wb = va, ratio**2 * vb
    df = (wa + wb) ** 2 / (wa**2 / (na - 1) + wb**2 / (nb - 1)) if wa + wb > 0 else math.inf
    t2 = _t_quantile(df) ** 2
    qa = b * b - t2 * vb
    if qa <= 0:
        return ratio, None, None
    disc = (a * b) ** 2 - qa * (a * a - t2 * va)
    root = math.sqrt(max(disc, 0.0))
    return ratio, (a * b - root) / qa, (a * b + root) / qa


def run_spread(pairs: Sequence[tuple[float, float]]) -> float:
    """The median of |x / y - 1| over pairs (t_ours, t_forced of the same algorithm)."""
    devs = [abs(x / y - 1.0) for x, y in pairs if y > 0]
    return median(devs) if devs else 0.0


@dataclass
class VerifiedPoint:
    ranks: int
    size: int
    default_s: float
    ours_s: float
    forced_s: dict[int, float]  # mean time per forced algorithm
    chosen: int  # the algorithm our rules name
    speedup: float
    speedup_lo: float | None
    speedup_hi: float | None
    rounds: int = 1  # the mpiruns of the default and of ours the times are judged by
    default_alg: int | None = None  # the algorithm Open MPI's default decision runs here
    # forced algorithms that run the same schedule here (advice.alike_classes): one function
    # of Open MPI's, whose forced times differ by the run-to-run spread only
    alike: tuple[frozenset[int], ...] = ()
    # our rules run the very call of Open MPI's default decision here (the advice kept the
    # default, or chose its algorithm with the same arguments): ours and the default are two
    # mpiruns of one call, which target (a) does not judge
    default_call: bool = False
    # the algorithms whose messages one call under our rules sent, as the MPI counted them
    # (advice.ran; Open MPI 5's pml/monitoring), None where not counted
    ran: tuple[int, ...] | None = None

    @property
    def fired(self) -> bool | None:
        """Our rules ran the chosen algorithm (its messages, or an alike one's), as counted."""
        if self.ran is None:
            return None
        return any(self.same_run(self.chosen, n) for n in self.ran)

    def same_run(self, a: int | None, b: int | None) -> bool:
        """a and b are one algorithm here (the same number, or the same schedule)."""
        return a is not None and (a == b or any(a in c and b in c for c in self.alike))

    @property
    def best(self) -> int:
        return min(self.forced_s, key=lambda n: (self.forced_s[n], n))

    @property
    def best_s(self) -> float:
        return self.forced_s[self.best]

    @property
    def chosen_rank(self) -> int | None:
        """1 for the measured fastest forced algorithm; None if the chosen was not timed."""
        if self.chosen not in self.forced_s:
            return None
        order = sorted(self.forced_s, key=lambda n: (self.forced_s[n], n))
        return order.index(self.chosen) + 1

    @property
    def within(self) -> bool:
        """The chosen algorithm's forced time is within 5% of the best's, or the chosen runs
        the best's schedule (:attr:`alike`)."""
        t = self.forced_s.get(self.chosen)
        if t is None:
            return False
        return t <= (1.0 + WITHIN) * self.best_s or self.same_run(self.chosen, self.best)

    @property
    def alike_best(self) -> bool:
        """The chosen is not the fastest forced algorithm but runs its schedule."""
        return self.chosen != self.best and self.same_run(self.chosen, self.best)

    @property
    def default_is_best(self) -> bool:
        """The measured best forced algorithm is the one the default decision runs (or runs
        its schedule): what separates the two times is then the difference between two
        mpiruns of it."""
        return self.same_run(self.default_alg, self.best)

    def gap_recovered(self) -> float | None:
        """(t_default - t_ours) / (t_default - t_best); None where the default is the best
        (faster than the best forced run, or running the best forced algorithm)."""
        gap = self.default_s - self.best_s
        if gap <= 0 or self.default_is_best:
            return None
        return (self.default_s - self.ours_s) / gap


def verified_point(
    ranks: int,
    size: int,
    default: Sequence[float],
    ours: Sequence[float],
    forced: dict[int, Sequence[float]],
    chosen: int,
    rounds: int = 1,
    default_alg: int | None = None,
    alike: Sequence[frozenset[int]] = (),
    default_call: bool = False,
) -> VerifiedPoint:
    """One point from the samples (seconds) of each run (:func:`run_samples`); ``alike``:
    the classes of forced algorithms that run one schedule here; ``default_call``: our
    rules run the default decision's own call here."""
    s, lo, hi = fieller_ratio(default, ours)
    return VerifiedPoint(
        ranks,
        size,
        sum(default) / len(default),
        sum(ours) / len(ours),
        {n: sum(v) / len(v) for n, v in forced.items() if v},
        chosen,
        s,
        lo,
        hi,
        rounds,
        default_alg,
        tuple(alike),
        default_call,
    )


@dataclass
class Targets:
    spread: float
    slower: list[VerifiedPoint]  # (a) fails here
    gap_points: list[VerifiedPoint]  # default slower than the best beyond the spread
    gap_short: list[VerifiedPoint]  # (b) fails here
    within: int  # (c) points with the chosen within 5%
    points: int
    # below 1 - s where our rules run the default's own call: two mpiruns of one call
    unjudged: list[VerifiedPoint] = field(default_factory=list)

    @property
    def a_ok(self) -> bool:
        return not self.slower

    @property
    def b_ok(self) -> bool:
        return not self.gap_short

    @property
    def c_ok(self) -> bool:
        return self.points > 0 and self.within >= SHARE_TARGET * self.points


def targets(points: Sequence[VerifiedPoint], spread: float | None = None) -> Targets:
    """The three targets over ``points`` (see the module text); ``spread`` defaults to
    :func:`run_spread` of (t_ours, t_forced(chosen))."""
    if spread is None:
        timed = [p for p in points if p.chosen in p.forced_s]
        spread = run_spread([(p.ours_s, p.forced_s[p.chosen]) for p in timed])
    below = [p for p in points if p.speedup_hi is not None and p.speedup_hi < 1.0 - spread]
    below += [p for p in points if p.speedup_hi is None and p.speedup < 1.0 - spread]
    slower = [p for p in below if not p.default_call]
    unjudged = [p for p in below if p.default_call]
    gap_points = [
        p for p in points if p.default_s - p.best_s > spread * p.default_s and not p.default_is_best
    ]
    short = [p for p in gap_points if (p.gap_recovered() or 0.0) < GAP_TARGET]
    within = sum(p.within for p in points)
    return Targets(spread, slower, gap_points, short, within, len(points), unjudged)
