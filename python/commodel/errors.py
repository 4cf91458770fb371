"""Errors a user can act on.

Every error that reaches a user is a :class:`CommodelError` (or a subclass) whose message
names what is at fault: the file, line, field, rank, label or link, and the bad value. The
``commodel`` command prints ``commodel: error: <message>`` on stderr and exits with
``exit_code`` (2), never with a traceback.

The Rust engine (the private module ``commodel._engine``) raises these classes itself: a
deadlock as :class:`DeadlockError`, an unknown model or bad model parameters as
:class:`ModelError`, a GOAL file that does not parse as :class:`GoalError`, a collective that
cannot be generated as :class:`CollectiveError`, a rank out of range as :class:`ScheduleError`.
"""

from __future__ import annotations


class CommodelError(Exception):
    """A user-facing error; the CLI prints its message and exits with ``exit_code``."""

    exit_code = 2


class GoalError(CommodelError):
    """A GOAL schedule that does not parse (the message names ``file:line:column``)."""


class ScheduleError(CommodelError):
    """A schedule that parses but cannot be executed as given (bad rank, size, dependency)."""


class DeadlockError(ScheduleError):
    """A schedule that cannot finish; the message lists the stuck ranks and labels."""


class ModelError(CommodelError):
    """An unknown model, or a model that cannot run with the parameters given."""


class CollectiveError(CommodelError):
    """A collective schedule that cannot be generated (unknown name, bad rank count, ...)."""


class PlatformError(CommodelError):
    """A platform file that does not validate (the message names the file and field path)."""


class PlatformWarning(UserWarning):
    """A platform that loads but looks wrong (a PLogP table that decreases with the size,
    a tree bandwidth above twice the level below); the message names the file and field."""


class UnitsError(CommodelError, ValueError):
    """A size, duration or rate that cannot be parsed (``64KiB``, ``1.5us``, ``1Gbps``)."""


class MissingDependencyError(CommodelError):
    """An optional dependency (mpi4py, duckdb, matplotlib, ...) is not installed."""

    def __init__(self, module: str, extra: str | None = None, what: str | None = None):
        hint = f"pip install 'commodel[{extra}]'" if extra is not None else f"pip install {module}"
        purpose = f" (needed for {what})" if what else ""
        super().__init__(
            f"the Python module {module!r} is not installed{purpose}; install it with: {hint}"
        )
        self.module = module
        self.extra = extra
