"""commodel: measure, model and predict MPI communication time on commodity clusters.

The Python face of the engine::

    import commodel
    schedule = commodel.collective("alltoall-xor-pairwise", ranks=32, size="64KiB")
    prediction = commodel.predict(schedule, "nomura2007", model="plogp")
    print(prediction.makespan_s, prediction.slowest_rank)

The compiled engine is loaded on first use, so ``import commodel`` (and ``commodel --help``)
stay fast and the pure-Python parts (platform files, units, errors) work without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import CommodelError

# Light modules: none of them loads the compiled engine or YAML at import time.
from .message_table import Message
from .platform import Platform, load_platform
from .prediction import Prediction, RankFinish, models, predict
from .schedules import collective, collective_names, parse_goal, read_goal, write_goal

if TYPE_CHECKING:
    from ._engine import Schedule  # noqa: F401

__all__ = [
    "CommodelError",
    "Message",
    "Platform",
    "Prediction",
    "RankFinish",
    "Schedule",
    "__version__",
    "collective",
    "collective_names",
    "load_platform",
    "models",
    "parse_goal",
    "predict",
    "read_goal",
    "write_goal",
]


def _installed_version() -> str:
    # importlib.metadata (with email, zipfile, ...) costs about 6 MiB of resident memory
    # in every process that imports it: asked for here, on first use only
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("commodel")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0.0.0+unknown"


def __getattr__(name: str) -> Any:
    if name == "Schedule":  # the compiled engine's class, loaded on first use
        from ._engine import Schedule

        return Schedule
    if name == "__version__":
        globals()["__version__"] = _installed_version()
        return globals()["__version__"]
    raise AttributeError(f"module 'commodel' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | {"Schedule", "__version__"})
