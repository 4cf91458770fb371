"""Picture files: the formats matplotlib can write here, checked before any work is done."""

from __future__ import annotations

import os

from ..errors import CommodelError, MissingDependencyError

# Formats matplotlib lists but cannot write without more software (pgf: a LaTeX system).
NEEDS_MORE = {"pgf"}


def picture_formats(what: str = "pictures") -> list[str]:
    """The file suffixes (without the dot) that pictures can be written as."""
    try:
        import matplotlib
    except ImportError as exc:
        raise MissingDependencyError("matplotlib", "plot", what) from exc
    matplotlib.use("Agg")
    from matplotlib.backend_bases import FigureCanvasBase

    return sorted(set(FigureCanvasBase.get_supported_filetypes()) - NEEDS_MORE)


def check_picture_path(path: str, flag: str) -> None:
    """Refuse ``path`` unless its suffix is a picture format that can be written."""
    suffix = os.path.splitext(path)[1].lstrip(".").lower()
    formats = picture_formats(flag)
    if suffix not in formats:
        given = f"suffix .{suffix[:20]}" if suffix else "no suffix"
        raise CommodelError(
            f"{flag} {path}: {given}; a picture is written as one of .{', .'.join(formats)}"
        )
