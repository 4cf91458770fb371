"""Predictions: run a schedule through the engine under a model and a platform.

:func:`predict` returns a :class:`Prediction` whose times are in seconds (the engine works
in integer picoseconds; ``makespan_ps`` keeps the exact value). ``Prediction.to_json()``
writes the fields of docs/formats.md (``model``, ``makespan_s``, ``ranks``, ``messages``,
``rto_events``) plus ``events`` and ``makespan_ps``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from .errors import ModelError, ScheduleError
from .message_table import Message, MessageTable
from .platform import Platform, default_model, incast_params, load_platform, model_spec
from .platform.engine_params import with_jitter
from .units import ps_to_seconds

if TYPE_CHECKING:
    from ._engine import Schedule, SimulateResult


@dataclass(frozen=True)
class RankFinish:
    """When a rank finished its last operation."""

    rank: int
    finish_s: float
    #: The exact engine value, integer picoseconds.
    finish_ps: int = 0


@dataclass(frozen=True)
class Prediction:
    """The outcome of one schedule under one model."""

    model: str
    makespan_s: float
    ranks: list[RankFinish]
    #: Every message (:class:`~commodel.message_table.Message`); from the engine a
    #: :class:`~commodel.message_table.MessageTable` (a sequence of them kept as columns,
    #: see its ``chunks``).
    messages: Sequence[Message] = field(default_factory=list)
    rto_events: list[dict[str, Any]] = field(default_factory=list)
    events: int = 0
    makespan_ps: int = 0
    platform: str = ""
    #: The makespan's 80% interval (:func:`commodel.spread.spread`: ``low_s``, ``high_s``,
    #: ``quantiles``, ``samples``, ``sigma``, ``model_error``), where one was asked for.
    interval: dict[str, Any] | None = None
    #: Where the prediction is the median of runs with the platform's per-message noise
    #: (``tcpflow`` on a platform with ``tcp.spread``): ``runs`` K, ``sigma``, the ``seed``
    #: of the run returned and ``noise_free_makespan_s``, the makespan without noise.
    noise: dict[str, Any] | None = None
    #: The makespans (s) of those K noisy runs, seeds 1..K in order, for the interval
    #: (:func:`commodel.spread.spread` takes them instead of running them again); not in
    #: the JSON.
    noisy_makespans_s: tuple[float, ...] | None = field(default=None, repr=False, compare=False)

    @property
    def slowest_rank(self) -> RankFinish:
        """The rank that finishes last (the lowest rank number among ties)."""
        if not self.ranks:
            raise ScheduleError("the schedule has no ranks")
        return max(self.ranks, key=lambda r: (r.finish_s, -r.rank))

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of docs/formats.md, as Python data."""
        return {
            "model": self.model,
            "platform": self.platform,
            "makespan_s": self.makespan_s,
            "makespan_ps": self.makespan_ps,
            "events": self.events,
            "ranks": [
                {"rank": r.rank, "finish_s": r.finish_s, "finish_ps": r.finish_ps}
                for r in self.ranks
            ],
            "messages": [
                {
                    "src": m.src,
                    "dst": m.dst,
                    "bytes": m.bytes,
                    "tag": m.tag,
                    "start_s": m.start_s,
                    "end_s": m.end_s,
                    "rto": m.rto,
                }
                for m in self.messages
            ],
            "rto_events": [dict(e) for e in self.rto_events],
            **({} if self.interval is None else {"interval": dict(self.interval)}),
            **({} if self.noise is None else {"noise": dict(self.noise)}),
        }

    def to_json(self, indent: int | None = None) -> str:
        """The prediction as one JSON object (docs/formats.md)."""
        return json.dumps(self.to_dict(), indent=indent)


def _seconds_fields(event: Mapping[str, Any]) -> dict[str, Any]:
    """Engine dicts carry ``*_ps`` integers; report them as ``*_s`` seconds."""
    out: dict[str, Any] = {}
    for key, value in event.items():
        if key.endswith("_ps") and isinstance(value, int):
            out[key[:-3] + "_s"] = ps_to_seconds(value)
        else:
            out[key] = value
    return out


def prediction_from_engine(result: SimulateResult, platform: str = "") -> Prediction:
    """Build a :class:`Prediction` from the dict that ``commodel._engine.simulate`` returns."""
    ranks = [
        RankFinish(rank, ps_to_seconds(ps), int(ps)) for rank, ps in enumerate(result["finish_ps"])
    ]
    raw = result.get("messages", [])
    messages: Sequence[Message] = (
        [
            Message(
                src=int(src),
                dst=int(dst),
                bytes=int(nbytes),
                tag=int(tag),
                start_s=ps_to_seconds(start),
                end_s=ps_to_seconds(end),
                rto=bool(rto),
            )
            for src, dst, nbytes, tag, start, end, rto in raw
        ]
        if isinstance(raw, list)
        else MessageTable(raw)
    )  # tuples, or the engine's columns
    return Prediction(
        model=str(result["model"]),
        makespan_s=ps_to_seconds(result["makespan_ps"]),
        ranks=ranks,
        messages=messages,
        rto_events=[_seconds_fields(e) for e in result.get("rto_events", [])],
        events=int(result.get("events", 0)),
        makespan_ps=int(result["makespan_ps"]),
        platform=platform,
    )


def predict(
    schedule: Schedule | str | os.PathLike[str],
    platform: Platform | str | os.PathLike[str],
    model: str | None = None,
    record_messages: bool = True,
    incast: Mapping[str, Any] | None = None,
    jitter: Mapping[str, Any] | None = None,
    noise: int | None = None,
) -> Prediction:
    """Predict ``schedule`` (a Schedule or a GOAL file) on ``platform`` under ``model``.

    ``platform`` is a :class:`~commodel.platform.Platform`, a platform file or the name of a
    built-in platform (``nomura2007``, ``loggopsim-default``). Models: ``hockney``,
    ``loggops``, ``maxmin``, ``maxmin-plain``, ``plogp``, ``plogpt``, ``tcpflow``, ``zhu``,
    ``zhu-fair`` (``commodel.models()`` lists them with a summary; docs/models.md says what
    each charges). Without ``model``: ``tcpflow`` on a calibrated platform (one with
    ``tcp.efficiency``), ``loggops`` otherwise.

    ``incast`` runs the schedule under Lastovetsky's stochastic incast rule (one draw of
    ``predict --samples``): the engine's ``levels``, ``table`` (what
    :func:`commodel.lmo.incast.incast_table` builds from the platform's ``many_to_one``
    section) and ``seed``; the model's parameters are then
    :func:`commodel.platform.incast_params`. ``jitter`` (``{"sigma": s, "seed": k}``)
    gives every message a noise factor on its bytes (one noisy run;
    :func:`commodel.spread.spread` runs several for the interval).

    **Stragglers.** Under ``tcpflow`` on a platform with ``tcp.spread`` σ (what
    ``calibrate`` measured of one flow's time about the model), the prediction is the run
    of median makespan among ``noise`` runs (default :data:`NOISE_RUNS`; none by default for
    schedules of more than :data:`NOISE_MAX_OPS` operations) with
    that noise, seeds 1..K: a synchronous round waits for its slowest flow, which the run
    without noise never does (docs/models.md, *Stragglers*). ``noise=0`` gives the run
    without noise; so do ``jitter`` and ``incast``, which ask for one run.
    """
    from . import _engine
    from .schedules import read_goal

    if model is not None and not isinstance(model, str):
        raise ModelError(
            f"predict: model must be a model name (a str such as 'plogp'), "
            f"got {type(model).__name__}"
        )
    if not isinstance(schedule, (str, os.PathLike, _engine.Schedule)):
        raise ScheduleError(
            "predict: schedule must be a Schedule or the path of a GOAL file, "
            f"got {type(schedule).__name__}"
        )
    if not isinstance(record_messages, bool):
        raise ModelError(
            f"predict: record_messages must be True or False, got {type(record_messages).__name__}"
        )
    if model is not None:
        model_spec(model)  # an unknown model fails before the platform is read
    plat = load_platform(platform)
    spec = model_spec(model if model is not None else default_model(plat))
    sched = read_goal(schedule) if isinstance(schedule, (str, os.PathLike)) else schedule
    if incast is None:
        params = plat.engine_params(spec.name, sched.num_ranks)
    else:
        params = incast_params(plat, spec.name, incast, sched.num_ranks)
    if jitter is not None:
        params = with_jitter(
            params, spec.name, jitter["sigma"], jitter["seed"], jitter.get("by_size")
        )
    elif incast is None and spec.name == NOISY_MODEL:
        median = _median_run(sched, plat, params, noise, record_messages)
        if median is not None:
            return median

    result = _engine.simulate(sched, spec.name, params, record_messages=record_messages)
    return prediction_from_engine(result, platform=plat.name)


#: The model whose point prediction is the median of noisy runs: the calibrated one, whose
#: per-message noise ``tcp.spread`` was measured against it. The papers' models stay as
#: the papers define them.
NOISY_MODEL = "tcpflow"
#: Runs with noise, by default: for the median (here) and the 80% interval (spread.py).
NOISE_RUNS = 20
#: Larger schedules get the run without noise unless ``noise`` is given: K runs cost K
#: times one, and a tcpflow run of 10^5 operations can take seconds (an alltoall of 100
#: ranks is 20,000).
NOISE_MAX_OPS = 20_000


def _median_run(
    sched: Schedule, plat: Any, params: dict[str, Any], noise: int | None, record: bool
) -> Prediction | None:
    """The run of median makespan (the lower of the two middle ones for an even count;
    ties to the smaller seed) among ``noise`` runs with the platform's ``tcp.spread``;
    None where there is no σ or ``noise`` is 0."""
    from . import _engine

    if noise is None:
        runs = NOISE_RUNS if sched.num_ops <= NOISE_MAX_OPS else 0
    elif isinstance(noise, int) and not isinstance(noise, bool) and noise >= 0:
        runs = noise
    else:
        raise ModelError(f"predict: noise must be a count of runs >= 0, got {noise!r}")
    tcp = plat.sections.get("tcp")
    sigma = getattr(tcp, "spread", None) if tcp is not None else None
    if not sigma or runs == 0:
        return None
    by_size = tcp.noise_by_size()
    by_seed = [
        _engine.simulate(
            sched,
            NOISY_MODEL,
            with_jitter(params, NOISY_MODEL, sigma, k, by_size),
            record_messages=False,
        )["makespan_ps"]
        for k in range(1, runs + 1)
    ]
    spans = sorted((t, k) for k, t in enumerate(by_seed, start=1))
    seed = spans[(runs - 1) // 2][1]
    free = _engine.simulate(sched, NOISY_MODEL, params, record_messages=False)["makespan_ps"]
    result = _engine.simulate(
        sched,
        NOISY_MODEL,
        with_jitter(params, NOISY_MODEL, sigma, seed, by_size),
        record_messages=record,
    )
    noise_info = {
        "runs": runs,
        "sigma": sigma,
        **(
            {} if by_size is None else {"sigma_by_size": {"sizes": by_size[0], "sigma": by_size[1]}}
        ),
        "seed": seed,
        "noise_free_makespan_s": ps_to_seconds(free),
    }
    return replace(
        prediction_from_engine(result, platform=plat.name),
        noise=noise_info,
        noisy_makespans_s=tuple(ps_to_seconds(t) for t in by_seed),
    )


def models() -> list[tuple[str, str]]:
    """The models :func:`predict` knows: ``(name, one-line summary)``."""
    from .platform import MODELS

    return [(name, MODELS[name].summary) for name in sorted(MODELS)]
