"""The ``commodel`` command. Entry point: :func:`commodel.cli.main.main`."""

from __future__ import annotations

from .main import main

__all__ = ["main"]
