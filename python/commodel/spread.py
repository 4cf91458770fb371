"""A prediction's spread: the interval its makespan falls in from run to run.

One run of a schedule is not the next: TCP shares a link unevenly, and a synchronous round
waits for its slowest flow (a straggler). The engine gives each message a factor on its
bytes, exp(σ·Z - σ²/2) with Z standard normal (``jitter``, :mod:`commodel-engine`'s
``jitter.rs``), σ being ``tcp.spread``: the spread of the log of one flow's time that
``calibrate`` measured (the residuals of the ``topology`` rounds against the fluid model,
the flows of every round at once). :func:`spread` runs the schedule :data:`SAMPLES` times
with seeds 1..K and gives the 10th and 90th percentiles of the makespans: the 80%
interval. The point prediction (``Prediction.makespan_s``) stays the run without noise.
Neither LogGOPSim, SimGrid nor the papers give one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import CommodelError

SAMPLES = 20  # runs of the schedule with noise
LOW_Q, HIGH_Q = 0.10, 0.90
MAX_OPS = 2_000_000  # larger schedules get no interval unless asked (K runs of them)


@dataclass(frozen=True)
class Spread:
    """The 80% interval of a makespan, seconds, from ``samples`` noisy runs with ``sigma``."""

    low_s: float
    high_s: float
    samples: int
    sigma: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "low_s": self.low_s,
            "high_s": self.high_s,
            "quantiles": [LOW_Q, HIGH_Q],
            "samples": self.samples,
            "sigma": self.sigma,
        }


def quantile(xs: list[float], q: float) -> float:
    """The q-quantile of ``xs``, linear between order statistics."""
    s = sorted(xs)
    pos = q * (len(s) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def sigma_of(platform: Any) -> float | None:
    """σ of the platform (``tcp.spread``), or None where it has none."""
    tcp = platform.sections.get("tcp")
    value = getattr(tcp, "spread", None) if tcp is not None else None
    return None if value is None else float(value)


def spread(
    schedule: Any, platform: Any, model: str, samples: int = SAMPLES, sigma: float | None = None
) -> Spread | None:
    """The makespan's 80% interval under ``model``: ``samples`` runs with per-message noise
    σ (default: the platform's ``tcp.spread``); None where there is no σ or the model has no
    messages to scale (``loggops``)."""
    from .platform import model_spec
    from .prediction import predict

    if samples < 2:
        raise CommodelError(f"--spread-samples {samples}: an interval needs at least 2 runs")
    sigma = sigma_of(platform) if sigma is None else sigma
    if sigma is None or model_spec(model).name == "loggops":
        return None
    spans = [
        predict(
            schedule,
            platform,
            model=model,
            record_messages=False,
            jitter={"sigma": sigma, "seed": seed},
        ).makespan_s
        for seed in range(1, samples + 1)
    ]
    return Spread(quantile(spans, LOW_Q), quantile(spans, HIGH_Q), samples, sigma)
