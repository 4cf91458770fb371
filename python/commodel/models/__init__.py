"""Closed-form models: Lastovetsky's LMO point-to-point, one-to-many and many-to-one.

``commodel.models.lmo`` holds the formulas (see :class:`LMOModel`); the gather split advice
is :func:`gather_split`.

``commodel.models()`` (calling the package) still lists the engine's models, as it did
before this package existed: the package's module object is callable for that reason.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from .lmo import Escalation, LMOModel, ManyToOnePrediction, gather_split

__all__ = ["Escalation", "LMOModel", "ManyToOnePrediction", "gather_split"]


class _CallableModule(types.ModuleType):
    def __call__(self) -> list[tuple[str, str]]:
        """The models ``commodel.predict`` knows: ``(name, one-line summary)``."""
        from ..prediction import models

        return models()

    def __repr__(self) -> str:  # pragma: no cover - cosmetic
        return f"<module {self.__name__!r} (callable: lists the engine's models)>"


def _install() -> None:
    module: Any = sys.modules[__name__]
    module.__class__ = _CallableModule


_install()
