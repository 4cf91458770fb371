"""Lastovetsky and O'Flynn's LMO closed forms (point-to-point, one-to-many, many-to-one).

Sections 4.1-4.3 and 7 of ``lastovetsky-many-to-one.txt``. Node 0 is the root of one-to-many
and many-to-one operations; an operation "involving n processors" has the root and the
n - 1 other nodes 1..n-1 (or the nodes given). Units: seconds, bytes, bytes per second.

* point-to-point (4.1): T_ij = C_i + t_i M + C_j + t_j M + M / beta_ij;
* one-to-many (4.2): C_0 + t_0 n' M + sum_j (C_j + t_j M + M/beta_0j) for M > S, with the
  max over j instead of the sum for M <= S (n' destinations);
* many-to-one (4.3): small (M < M1(n)) T_s = C_0 + sum_i C_i + M (t_0 + 1/beta_0 +
  kappa_1 sum_i t_i); medium (M1(n) <= M < M2): T_s, or level t_i with probability
  f_i(n, M) (certain escalation from Mc(n)); large (M >= M2): C_0 + t_0 M + M/beta_0 +
  kappa_2 sum_s (C_s + t_s M). 1/beta_0 is the mean of 1/beta_s0 over the senders (the
  paper's single beta_0 "to the receiver"), as the fit does;
* gather split (7): the smallest m with M/m <= M1.

The ``many_to_one`` platform section is the one ``commodel fit`` writes: ``n`` (process
counts), ``M1`` and ``Mc`` (one per n, null when never observed), ``M2``, ``levels`` (t_i),
``probability`` (one B-spline surface f_i(n, M) per level: ``kx``, ``ky``, ``n_knots``,
``M_knots``, ``coefficients``, evaluated with scipy), ``kappa_1``, ``kappa_2``. Between the
measured n, M1(n) and Mc(n) are interpolated linearly; outside they take the nearest value.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ModelError


@dataclass(frozen=True)
class Escalation:
    """One escalation level: time t_i (s) and its probability f_i(n, M)."""

    time_s: float
    probability: float


@dataclass(frozen=True)
class ManyToOnePrediction:
    """The many-to-one time: its linear part, its region and the escalation levels."""

    region: str  # "small", "medium" or "large"
    linear_s: float  # the deterministic model of the region (T_s, or the large-message line)
    escalations: tuple[Escalation, ...] = field(default_factory=tuple)

    @property
    def p_escalation(self) -> float:
        """Probability that the operation escalates to some level."""
        return min(1.0, sum(e.probability for e in self.escalations))

    @property
    def expected_s(self) -> float:
        """Mean time: levels weighted by f_i, the linear time for the rest."""
        p = self.p_escalation
        return (1.0 - p) * self.linear_s + sum(e.probability * e.time_s for e in self.escalations)

    def sample(self, rng: random.Random) -> float:
        """One time drawn from the model (the linear time, or a level with f_i)."""
        u = rng.random()
        for e in self.escalations:
            if u < e.probability:
                return e.time_s
            u -= e.probability
        return self.linear_s


def gather_split(size: int, m1: int) -> int:
    """Lastovetsky section 7: the smallest m with size/m <= M1 (so size/(m-1) > M1)."""
    if m1 <= 0:
        raise ModelError(f"gather split: M1 must be > 0 bytes, got {m1}")
    if size < 0:
        raise ModelError(f"gather split: the size must be >= 0 bytes, got {size}")
    return max(1, math.ceil(size / m1))


def _interpolate(ns: Sequence[int], values: Sequence[float | None], n: float) -> float | None:
    points = [(float(x), float(v)) for x, v in zip(ns, values) if v is not None]
    if not points:
        return None
    points.sort()
    if n <= points[0][0]:
        return points[0][1]
    if n >= points[-1][0]:
        return points[-1][1]
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        if x0 <= n <= x1:
            return y0 + (y1 - y0) * (n - x0) / (x1 - x0)
    return points[-1][1]  # pragma: no cover - unreachable


def _between(ns: Sequence[int], values: Sequence[float | None], n: float) -> float | None:
    """Linear interpolation at ``n`` between the two measured counts around it, only where
    both have a value (a count measured with None, or outside the measured ones: None)."""
    points = sorted((float(x), v) for x, v in zip(ns, values))
    for x, v in points:
        if n == x:
            return None if v is None else float(v)
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        if x0 < n < x1 and y0 is not None and y1 is not None:
            return float(y0) + (float(y1) - float(y0)) * (n - x0) / (x1 - x0)
    return None


class LMOModel:
    """LMO closed forms for one platform.

    ``C`` (s) and ``t`` (s/B) per node, ``beta[i][j]`` (B/s, None where unknown) the rate
    from node i to node j, and optionally the ``many_to_one`` statistics (a mapping in the
    format of the module documentation).
    """

    def __init__(
        self,
        C: Sequence[float],  # noqa: N803 - the paper's symbol
        t: Sequence[float],
        beta: Sequence[Sequence[float | None]],
        many_to_one: Mapping[str, Any] | None = None,
    ) -> None:
        if len(C) != len(t) or len(beta) != len(C):
            raise ModelError(
                f"LMO: C, t and beta need one entry per node (got {len(C)}, {len(t)}, {len(beta)})"
            )
        self.C = tuple(float(c) for c in C)
        self.t = tuple(float(x) for x in t)
        self.beta = tuple(tuple(row) for row in beta)
        self.m2o = dict(many_to_one) if many_to_one is not None else None

    @classmethod
    def from_platform(cls, platform: Any) -> LMOModel:
        """The model of a :class:`commodel.platform.Platform` with an ``lmo`` section."""
        lmo = platform.section("lmo", "lmo")
        return cls(lmo.C, lmo.t, lmo.beta, platform.sections.get("many_to_one"))

    @property
    def nodes(self) -> int:
        return len(self.C)

    def _node(self, i: int) -> int:
        if not 0 <= i < self.nodes:
            raise ModelError(f"LMO: node {i} out of range (the platform has {self.nodes} nodes)")
        return i

    def _rate(self, i: int, j: int) -> float:
        b = self.beta[self._node(i)][self._node(j)]
        if b is None or b <= 0:
            raise ModelError(f"LMO: no link rate beta[{i}][{j}] in the platform")
        return float(b)

    # 4.1 ------------------------------------------------------------------------------

    def point_to_point(self, i: int, j: int, size: float) -> float:
        """T_ij = C_i + t_i M + C_j + t_j M + M / beta_ij (seconds)."""
        m = float(size)
        return (
            self.C[self._node(i)]
            + self.t[i] * m
            + self.C[self._node(j)]
            + self.t[j] * m
            + m / self._rate(i, j)
        )

    # 4.2 ------------------------------------------------------------------------------

    def one_to_many(
        self, size: float, threshold: float, dests: Sequence[int] | None = None, root: int = 0
    ) -> float:
        """One-to-many time: serialised (sum) for M > S, parallel (max) for M <= S."""
        m = float(size)
        dests = [d for d in range(self.nodes) if d != root] if dests is None else list(dests)
        if not dests:
            raise ModelError("one-to-many needs at least one destination")
        per = [self.C[self._node(d)] + self.t[d] * m + m / self._rate(root, d) for d in dests]
        base = self.C[self._node(root)] + self.t[root] * len(dests) * m
        return base + (sum(per) if m > threshold else max(per))

    # 4.3 ------------------------------------------------------------------------------

    def _senders(self, n: int, senders: Sequence[int] | None, root: int) -> list[int]:
        if senders is not None:
            out = list(senders)
        else:
            if n < 2 or n > self.nodes:
                raise ModelError(
                    f"many-to-one: n must be 2..{self.nodes} (nodes of the platform), got {n}"
                )
            out = [i for i in range(self.nodes) if i != root][: n - 1]
        for s in out:
            self._node(s)
        return out

    def _inv_beta0(self, senders: Sequence[int], root: int) -> float:
        return sum(1.0 / self._rate(s, root) for s in senders) / len(senders)

    def _kappa(self, name: str) -> float:
        value = None if self.m2o is None else self.m2o.get(name)
        if value is None:
            raise ModelError(f"many-to-one: {name} is not in the platform's many_to_one section")
        return float(value)

    def many_to_one_small(
        self, n: int, size: float, senders: Sequence[int] | None = None, root: int = 0
    ) -> float:
        """T_s = C_0 + sum C_i + M (t_0 + 1/beta_0 + kappa_1 sum t_i) (section 4.3.1)."""
        ss = self._senders(n, senders, root)
        m = float(size)
        k1 = self._kappa("kappa_1")
        return (
            self.C[root]
            + sum(self.C[s] for s in ss)
            + m * (self.t[root] + self._inv_beta0(ss, root) + k1 * sum(self.t[s] for s in ss))
        )

    def many_to_one_large(
        self, n: int, size: float, senders: Sequence[int] | None = None, root: int = 0
    ) -> float:
        """C_0 + t_0 M + M/beta_0 + kappa_2 sum (C_s + t_s M) (section 4.3.3)."""
        ss = self._senders(n, senders, root)
        m = float(size)
        k2 = self._kappa("kappa_2")
        return (
            self.C[root]
            + self.t[root] * m
            + m * self._inv_beta0(ss, root)
            + k2 * sum(self.C[s] + self.t[s] * m for s in ss)
        )

    def M1(self, n: int) -> float | None:  # noqa: N802 - the paper's symbol
        """M1(n): the smallest size from which escalations are seen (None: never)."""
        if self.m2o is None:
            return None
        return _interpolate(self.m2o.get("n", []), self.m2o.get("M1", []), n)

    def Mc(self, n: int) -> float | None:  # noqa: N802
        """Mc(n): from this size on, escalation is certain (None: never)."""
        if self.m2o is None:
            return None
        # not held beyond the counts where it was seen: certainty measured at n = 15 and 16
        # is no certainty at n = 8
        return _between(self.m2o.get("n", []), self.m2o.get("Mc", []), n)

    @property
    def M2(self) -> float | None:  # noqa: N802
        """M2: from this size on, escalations stop (None: not observed)."""
        return None if self.m2o is None else self.m2o.get("M2")

    def escalation_probabilities(self, n: int, size: float) -> list[float]:
        """f_i(n, M) for every level, from the stored B-spline surfaces, clipped to [0, 1]."""
        if self.m2o is None:
            return []
        from scipy.interpolate import bisplev

        out = []
        for surface in self.m2o.get("probability", []):
            tck = (
                list(surface["n_knots"]),
                list(surface["M_knots"]),
                list(surface["coefficients"]),
                int(surface["kx"]),
                int(surface["ky"]),
            )
            out.append(float(min(1.0, max(0.0, bisplev(float(n), float(size), tck)))))
        return out

    def escalations(self, n: int, size: float) -> tuple[Escalation, ...]:
        """The levels t_i with their probabilities f_i(n, M) for a medium message (none
        outside [M1(n), M2) or for n < 3); certain from Mc(n) (renormalised to sum 1)."""
        m = float(size)
        m1, m2 = self.M1(n), self.M2
        if n < 3 or m1 is None or m < m1 or (m2 is not None and m >= m2):
            return ()
        levels = [float(v) for v in (self.m2o or {}).get("levels", [])]
        f = self.escalation_probabilities(n, m)
        if len(f) != len(levels):
            raise ModelError(f"many-to-one: {len(levels)} levels but {len(f)} probability surfaces")
        mc = self.Mc(n)
        total = sum(f)
        if mc is not None and m >= mc:
            f = [p / total for p in f] if total > 0 else [1.0 / len(f)] * len(f) if f else []
        elif total > 1.0:
            f = [p / total for p in f]
        return tuple(Escalation(t, p) for t, p in zip(levels, f))

    def many_to_one(
        self, n: int, size: float, senders: Sequence[int] | None = None, root: int = 0
    ) -> ManyToOnePrediction:
        """The many-to-one prediction of section 4.3 for n processors and size M."""
        m = float(size)
        m1, m2 = self.M1(n), self.M2
        if m2 is not None and m >= m2:
            return ManyToOnePrediction("large", self.many_to_one_large(n, m, senders, root))
        small = self.many_to_one_small(n, m, senders, root)
        if n < 3 or m1 is None or m < m1:
            return ManyToOnePrediction("small", small)
        return ManyToOnePrediction("medium", small, self.escalations(n, m))
