"""Every measurement, one line each: the run (its module under ``measure/``) and its fit
(its module under ``fit/``, if it gives a platform section).

A measurement's module declares its :class:`~commodel.measure.unit.Measurement` (options,
procedure, help texts); the line here binds it to the fit module that turns its campaigns
into platform sections. ``commodel measure`` offers a subcommand per line (in this order),
``commodel fit`` walks the lines (:mod:`commodel.fit.assemble`), ``calibrate`` picks its
parts from them. A fit module is imported when it is used (it may need numpy or scipy,
which ``commodel --help`` must not load), and may define:

* ``sections(db, campaign) -> {section: value}``: the sections one campaign gives (plus
  ``"__comment__"``, the comment written above them);
* ``complete(sections, comments, db, campaign)``: once every campaign has given its
  sections, what this measurement adds to them (in the order of the lines here);
* ``through_model(sections, comments, db, campaign)``: after every ``complete``, what is
  fitted by predicting with the platform fitted so far;
* ``summary(result, db) -> str``: what ``measure NAME`` prints (the fitted values), from the
  procedure's result and the results database; without a fit module the measurement's own
  ``summary(result)`` prints.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from . import (
    chain,
    check,
    collective,
    concurrent,
    efficiency,
    lmo,
    manytoone,
    pattern,
    plogp,
    ports,
    tcp,
    topology,
    tree,
    wire,
)
from .unit import Measurement


@dataclass(frozen=True)
class Unit:
    """A measurement and the module of ``commodel.fit`` that fits its campaigns (None: it
    gives no platform section)."""

    measurement: Measurement
    fit: str | None = None

    @property
    def name(self) -> str:
        return self.measurement.name

    def fit_module(self) -> ModuleType | None:
        return None if self.fit is None else importlib.import_module(f"commodel.fit.{self.fit}")

    def hook(self, name: str) -> Any:
        """The fit module's function ``name`` (see the module documentation), or None."""
        module = self.fit_module()
        return getattr(module, name, None) if module is not None else None

    def summary(self, result: dict[str, Any], db_path: str) -> str:
        """What ``measure NAME`` prints after its campaign ran."""
        show = self.hook("summary")
        if show is None:
            if self.measurement.summary is None:
                return f"campaign {result['campaign']}: {self.name}"
            return self.measurement.summary(result)
        from ..db import ResultsDB

        with ResultsDB(db_path, read_only=True) as db:
            return show(result, db)


UNITS: tuple[Unit, ...] = (
    Unit(tcp.MEASUREMENT, fit="tcp"),
    Unit(plogp.MEASUREMENT, fit="plogp"),
    Unit(tree.MEASUREMENT, fit="tree"),
    Unit(topology.MEASUREMENT, fit="topology"),
    Unit(lmo.MEASUREMENT, fit="lmo"),
    Unit(manytoone.MANY_TO_ONE, fit="manytoone"),
    Unit(manytoone.ONE_TO_MANY, fit="manytoone"),
    Unit(concurrent.MEASUREMENT),
    # before efficiency: its fan-in is fitted through tcpflow with the ports' tail drops
    Unit(ports.MEASUREMENT, fit="ports"),
    Unit(efficiency.MEASUREMENT, fit="efficiency"),
    Unit(wire.MEASUREMENT, fit="wire"),
    # through tcpflow with every rule but its own fitted
    Unit(chain.MEASUREMENT, fit="chain"),
    # last: it predicts with every other section fitted
    Unit(check.MEASUREMENT, fit="check"),
    Unit(pattern.MEASUREMENT),
    Unit(collective.MEASUREMENT),
)

BY_NAME: dict[str, Unit] = {u.name: u for u in UNITS}
