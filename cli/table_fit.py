"""Tables that fit an 80-column terminal (issue 15, item 6).

A table wider than the terminal wraps each row over two lines and stops being a table. The
widest columns are cut (with "…") until the row fits; a column headed ``id`` is cut last,
since its cells are what the next command takes (``feral memory forget ID``).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["TABLE_WIDTH", "cut", "fit_widths"]

TABLE_WIDTH = 80
GAP = 2
FLOOR = 6
"""No column is cut below this many characters (or its header, if longer)."""


def fit_widths(
    widths: Sequence[int], headers: Sequence[str], limit: int = TABLE_WIDTH
) -> list[int]:
    """Column widths whose sum with the gaps is at most ``limit`` where that is possible."""
    fitted = list(widths)
    floors = [max(FLOOR, len(h)) for h in headers]
    for protect_ids in (True, False):
        while sum(fitted) + GAP * (len(fitted) - 1) > limit:
            cuttable = [
                i
                for i, w in enumerate(fitted)
                if w > floors[i] and not (protect_ids and headers[i] == "id")
            ]
            if not cuttable:
                break
            widest = max(cuttable, key=lambda i: fitted[i])
            fitted[widest] -= 1
    return fitted


def cut(cell: str, width: int) -> str:
    """``cell`` within ``width`` characters, its end replaced by "…" if it was longer."""
    return cell if len(cell) <= width else cell[: width - 1] + "…"


def block_lines(rows: Sequence[Sequence[object]], headers: Sequence[str]) -> list[str]:
    """Rows too many-columned for 80 characters, as one block per row: its first cell as a
    heading, then one ``header  value`` line per other column, each cut to fit."""
    label = max(len(h) for h in headers[1:])
    lines: list[str] = []
    for row in rows:
        lines.append(cut(f"{headers[0]} {row[0]}", TABLE_WIDTH))
        for header, value in zip(headers[1:], row[1:], strict=True):
            line = f"  {header.ljust(label)}  {' '.join(str(value).split())}"
            lines.append(cut(line, TABLE_WIDTH))
    return lines
