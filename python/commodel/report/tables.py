"""Plain-text tables with aligned columns."""

from __future__ import annotations

from collections.abc import Sequence


def format_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[object]],
    align: str | None = None,
    indent: str = "",
) -> str:
    """Format ``rows`` under ``headers``; ``align`` has one ``l`` or ``r`` per column
    (default: first column left, the others right)."""
    columns = len(headers)
    if align is None:
        align = "l" + "r" * (columns - 1)
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    for row in cells:
        if len(row) != columns:
            raise ValueError(f"row {row!r} has {len(row)} cells, expected {columns}")
    widths = [max(len(row[i]) for row in cells) for i in range(columns)]

    def line(row: list[str]) -> str:
        parts = [
            cell.ljust(widths[i]) if align[i] == "l" else cell.rjust(widths[i])
            for i, cell in enumerate(row)
        ]
        return (indent + "  ".join(parts)).rstrip()

    rule = indent + "  ".join("-" * w for w in widths)
    return "\n".join([line(cells[0]), rule, *(line(r) for r in cells[1:])])
