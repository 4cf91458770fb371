"""Errors a user can act on.

Every error that reaches a user is a :class:`CommodelError` (or a subclass) whose message
names what is at fault: the file, line, field, rank, label or link, and the bad value. The
``commodel`` command prints ``commodel: error: <message>`` on stderr and exits with
``exit_code`` (2), never with a traceback.

Errors raised by the Rust engine (the private module ``commodel._engine``) are converted by
:func:`from_engine`, or by the :func:`engine_errors` context manager, into the subclass of the
same name here, keeping the engine's message, which is already user-ready.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


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


# Engine exception class name -> our class. Unknown engine errors become CommodelError.
_ENGINE_TO_PYTHON: dict[str, type[CommodelError]] = {
    "GoalError": GoalError,
    "ScheduleError": ScheduleError,
    "DeadlockError": DeadlockError,
    "ModelError": ModelError,
    "CollectiveError": CollectiveError,
    "EngineError": CommodelError,
}


# The module name the engine's exception classes report (PyO3's create_exception may
# give the short name).
_ENGINE_MODULES = ("commodel._engine", "_engine")


def _from_engine_module(cls: type) -> bool:
    return getattr(cls, "__module__", "") in _ENGINE_MODULES


def is_engine_error(exc: BaseException) -> bool:
    """True if ``exc`` was raised by the compiled engine (``commodel._engine``)."""
    return any(
        cls.__name__ == "EngineError" and _from_engine_module(cls) for cls in type(exc).__mro__
    )


def from_engine(exc: BaseException) -> CommodelError:
    """Convert an engine exception into the :class:`CommodelError` subclass of the same name."""
    target: type[CommodelError] = CommodelError
    for cls in type(exc).__mro__:
        if cls.__name__ in _ENGINE_TO_PYTHON and _from_engine_module(cls):
            target = _ENGINE_TO_PYTHON[cls.__name__]
            break
    converted = target(str(exc))
    converted.__cause__ = exc
    return converted


@contextlib.contextmanager
def engine_errors() -> Iterator[None]:
    """Re-raise engine exceptions inside the block as :class:`CommodelError` subclasses."""
    try:
        yield
    except Exception as exc:
        if is_engine_error(exc):
            raise from_engine(exc) from exc
        raise
