"""A prediction's spread: the interval its makespan falls in from run to run.

One run of a schedule is not the next: TCP shares a link unevenly, and a synchronous round
waits for its slowest flow (a straggler). The engine gives each message a factor on its
bytes, exp(σ·Z - σ²/2) with Z standard normal (``jitter``, :mod:`commodel-engine`'s
``jitter.rs``), σ being ``tcp.spread``: the spread of the log of one flow's time that
``calibrate`` measured (the residuals of the ``topology`` rounds against the fluid model,
the flows of every round at once). :func:`spread` runs the schedule :data:`SAMPLES` times
with seeds 1..K and gives the 10th and 90th percentiles of the makespans: the 80%
interval. The point prediction (``Prediction.makespan_s``) is, under ``tcpflow``, the run of
median makespan among as many (:func:`commodel.prediction.predict`, *Stragglers*).

That interval holds the network's noise about the model, not the model's own error. Where
the platform has ``tcp.model_error`` σ_m (1.4826 times the median of |ln(measured / predicted)|
over the collectives ``calibrate``'s ``check`` part ran, :mod:`commodel.fit.check`), the
two are combined for ``tcpflow``, the model σ_m was measured with, as independent
log-normal errors (:func:`widen`): the noisy runs' interval
[lo, hi] is read as centre c = (ln lo + ln hi) / 2 and σ_f = (ln hi - ln lo) / (2 z), z =
1.2816 (the normal's 90th percentile), and the interval becomes exp(c ± z sqrt(σ_f² + σ_m²)).
Neither LogGOPSim, SimGrid nor the papers give one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .errors import CommodelError
from .prediction import NOISE_RUNS

SAMPLES = NOISE_RUNS  # runs of the schedule with noise, as for a prediction's median
LOW_Q, HIGH_Q = 0.10, 0.90
Z90 = 1.2815515655446004  # the standard normal's 90th percentile


@dataclass(frozen=True)
class Spread:
    """The 80% interval of a makespan, seconds, from ``samples`` noisy runs with ``sigma``
    (0 runs where the platform has no σ), widened by the model's error ``model_error``."""

    low_s: float
    high_s: float
    samples: int
    sigma: float
    model_error: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "low_s": self.low_s,
            "high_s": self.high_s,
            "quantiles": [LOW_Q, HIGH_Q],
            "samples": self.samples,
            "sigma": self.sigma,
            "model_error": self.model_error,
        }


def quantile(xs: list[float], q: float) -> float:
    """The q-quantile of ``xs``, linear between order statistics."""
    s = sorted(xs)
    pos = q * (len(s) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def sigma_of(platform: Any, field: str = "spread") -> float | None:
    """σ of the platform (``tcp.spread``; ``field="model_error"``: σ_m), or None where it
    has none."""
    tcp = platform.sections.get("tcp")
    value = getattr(tcp, field, None) if tcp is not None else None
    return None if value is None else float(value)


def widen(low_s: float, high_s: float, model_error: float) -> tuple[float, float]:
    """The 80% interval [low_s, high_s] of the noisy runs combined with a log-normal model
    error σ_m: exp(c ± z sqrt(σ_f² + σ_m²)), c and σ_f read off the interval (module text)."""
    if model_error <= 0.0 or low_s <= 0.0 or high_s <= 0.0:
        return low_s, high_s
    c = 0.5 * (math.log(low_s) + math.log(high_s))
    s_f = (math.log(high_s) - math.log(low_s)) / (2.0 * Z90)
    s = math.hypot(s_f, model_error)
    return math.exp(c - Z90 * s), math.exp(c + Z90 * s)


def spread(
    schedule: Any,
    platform: Any,
    model: str,
    samples: int = SAMPLES,
    sigma: float | None = None,
    prediction: Any = None,
) -> Spread | None:
    """The makespan's 80% interval under ``model``: ``samples`` runs with per-message noise
    σ (default: the platform's ``tcp.spread``); None where there is no σ or the model has no
    messages to scale (``loggops``). ``prediction``: the schedule's prediction under
    ``model`` on ``platform``; where it is the median of the same runs (``tcpflow``:
    ``noisy_makespans_s``, seeds 1..``samples`` with σ), their makespans are taken instead of
    running them again."""
    from .platform import model_spec
    from .prediction import predict

    if samples < 2:
        raise CommodelError(f"--spread-samples {samples}: an interval needs at least 2 runs")
    sigma = sigma_of(platform) if sigma is None else sigma
    # σ_m is tcpflow's error (the check part's collectives predicted with it); other
    # models keep the network's noise alone
    error = (
        (sigma_of(platform, "model_error") or 0.0) if model_spec(model).name == "tcpflow" else 0.0
    )
    if (sigma is None and not error) or model_spec(model).name == "loggops":
        return None
    if sigma is None:  # no network noise measured: the model's error alone
        point = (
            prediction.makespan_s
            if prediction is not None
            else predict(schedule, platform, model=model, record_messages=False).makespan_s
        )
        low, high = widen(point, point, error)
        return Spread(low, high, 0, 0.0, error)
    tcp = platform.sections.get("tcp")
    by_size = tcp.noise_by_size() if tcp is not None and sigma == tcp.spread else None
    done = getattr(prediction, "noisy_makespans_s", None)
    noise = getattr(prediction, "noise", None) or {}
    if done is not None and len(done) == samples and noise.get("sigma") == sigma:
        spans = list(done)
    else:
        spans = [
            predict(
                schedule,
                platform,
                model=model,
                record_messages=False,
                jitter={"sigma": sigma, "seed": seed, "by_size": by_size},
            ).makespan_s
            for seed in range(1, samples + 1)
        ]
    low, high = widen(quantile(spans, LOW_Q), quantile(spans, HIGH_Q), error)
    return Spread(low, high, samples, sigma, error)
