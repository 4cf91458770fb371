"""commodel: measure, model and predict MPI communication time on commodity clusters.

The Python face of the engine::

    import commodel
    schedule = commodel.collective("alltoall-xor-pairwise", ranks=32, size="64KiB")
    prediction = commodel.predict(schedule, "nomura2007", model="plogp")
    print(prediction.makespan_s, prediction.slowest_rank)

Names are imported on first use, so ``import commodel`` (and ``commodel --help``) stay fast
and the pure-Python parts (platform files, units, errors) work without the compiled engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import CommodelError

try:
    from importlib.metadata import PackageNotFoundError, version

    __version__ = version("commodel")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

if TYPE_CHECKING:  # the names below, for type checkers and editors
    from ._engine import Schedule  # noqa: F401
    from .platform import Platform, load_platform  # noqa: F401
    from .predict import Message, Prediction, RankFinish, models, predict  # noqa: F401
    from .schedules import (  # noqa: F401
        collective,
        collective_names,
        parse_goal,
        read_goal,
        write_goal,
    )

# public name -> module that defines it
_LAZY = {
    "Schedule": "._engine",
    "Platform": ".platform",
    "load_platform": ".platform",
    "Prediction": ".predict",
    "RankFinish": ".predict",
    "Message": ".predict",
    "predict": ".predict",
    "models": ".predict",
    "collective": ".schedules",
    "collective_names": ".schedules",
    "parse_goal": ".schedules",
    "read_goal": ".schedules",
    "write_goal": ".schedules",
}

__all__ = ["CommodelError", "__version__", *sorted(_LAZY)]


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'commodel' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module_name, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
