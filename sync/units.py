"""Durations and node ids as people read them, for messages about clocks.

A clock refusal is read by someone deciding which device to fix: "13 min ahead" and a short id
they can match against ``feral sync peers`` say that at a glance, where ``780000 ms`` and a
32-character id do not.
"""

from __future__ import annotations

__all__ = ["SHORT_ID", "format_ms", "short_id"]

SHORT_ID = 8
"""Characters of a node id shown in messages: enough to tell a mesh's devices apart."""

_UNITS = (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1_000))


def format_ms(ms: int) -> str:
    """``ms`` in the largest unit it fills, rounded down, with one more unit when it has one:
    ``"13 min"``, ``"2 h 5 min"``, ``"400 d"``, ``"850 ms"``."""
    sign, rest = ("-" if ms < 0 else ""), abs(ms)
    for index, (name, size) in enumerate(_UNITS):
        if rest >= size:
            whole, rest = divmod(rest, size)
            text = f"{whole} {name}"
            if index + 1 < len(_UNITS) and name != "s":
                small_name, small_size = _UNITS[index + 1]
                if rest >= small_size:
                    text += f" {rest // small_size} {small_name}"
            return sign + text
    return f"{sign}{rest} ms"


def short_id(node_id: str) -> str:
    """The first :data:`SHORT_ID` characters of a node id."""
    return node_id[:SHORT_ID]
