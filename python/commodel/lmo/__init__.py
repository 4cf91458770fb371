"""Lastovetsky's LMO model: closed forms and the stochastic incast rule.

:mod:`.closed_forms` holds the point-to-point, one-to-many and many-to-one formulas (see
:class:`LMOModel`) and the gather split advice :func:`gather_split`; :mod:`.incast` runs a
schedule several times with the many-to-one escalation rule (``predict --samples``).

The engine's models are listed by ``commodel.models()``, a function of the top package.
"""

from __future__ import annotations

from .closed_forms import Escalation, LMOModel, ManyToOnePrediction, gather_split

__all__ = ["Escalation", "LMOModel", "ManyToOnePrediction", "gather_split"]
