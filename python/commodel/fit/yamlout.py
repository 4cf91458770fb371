"""A small deterministic YAML writer for fitted platform files.

Mappings are written in block style in insertion order, lists of scalars in flow style
(``[1, 2, 3]``), floats rounded to 6 significant digits and then written with Python's
shortest round-trip repr, strings as JSON strings
(which YAML reads back unchanged). The same data always gives the same bytes.
"""

from __future__ import annotations

import json
import math
from typing import Any


def scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"cannot write a non-finite number ({value}) to a platform file")
        text = repr(float(f"{value:.6g}"))  # 6 significant digits: beyond measurement precision
        if "e" in text and "." not in text.split("e")[0]:
            mant, exp = text.split("e")
            text = f"{mant}.0e{exp}"  # YAML 1.1 readers need a dot to see a float
        return text
    if isinstance(value, str):
        return json.dumps(value)
    try:  # numpy scalars
        import numpy as np

        if isinstance(value, np.integer):
            return str(int(value))
        if isinstance(value, np.floating):
            return scalar(float(value))
    except ImportError:  # pragma: no cover
        pass
    raise TypeError(f"cannot write {type(value).__name__} to a platform file")


def _is_scalar_list(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(
        not isinstance(v, (dict, list, tuple)) for v in value
    )


def dump(data: dict[str, Any], comments: dict[str, str] | None = None) -> str:
    """YAML text of ``data``; ``comments`` maps top-level keys to a comment line before them."""
    lines: list[str] = []
    _emit(data, 0, lines, comments or {})
    return "\n".join(lines) + "\n"


def _emit(data: dict[str, Any], indent: int, lines: list[str], comments: dict[str, str]) -> None:
    pad = " " * indent
    for key, value in data.items():
        if indent == 0 and key in comments:
            for c in comments[key].splitlines():
                lines.append(f"# {c}".rstrip())
        if isinstance(value, dict):
            lines.append(f"{pad}{key}:")
            _emit(value, indent + 2, lines, comments)
        elif _is_scalar_list(value):
            lines.append(f"{pad}{key}: [" + ", ".join(scalar(v) for v in value) + "]")
        elif isinstance(value, (list, tuple)):
            lines.append(f"{pad}{key}:")
            for item in value:
                if isinstance(item, dict):
                    first = True
                    sub: list[str] = []
                    _emit(item, indent + 4, sub, {})
                    for s in sub:
                        if first:
                            lines.append(f"{pad}  - " + s.lstrip())
                            first = False
                        else:
                            lines.append(s)
                elif _is_scalar_list(item):
                    lines.append(f"{pad}  - [" + ", ".join(scalar(v) for v in item) + "]")
                else:
                    lines.append(f"{pad}  - {scalar(item)}")
        else:
            lines.append(f"{pad}{key}: {scalar(value)}")
