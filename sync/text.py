"""Text that came from a peer, made safe to show: control characters escaped (issue 11, #10).

Anything a peer sends (an Error frame's code and message, its Hello's name) reaches a terminal
through ``sync now``, ``sync status`` and the serve log, and is stored as ``last_error``.
Printed raw, an escape sequence would recolour or rewrite the user's terminal and a newline
would forge a line of output. :func:`printable` is the one function every such path uses.
"""

from __future__ import annotations

import unicodedata

__all__ = ["printable"]

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_UNSAFE_CATEGORIES = frozenset({"Cc", "Zl", "Zp"})
_BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
"""Characters that reorder the text shown after them (Trojan Source, CVE-2021-42574)."""


def printable(text: str) -> str:
    """``text`` with every control character written as an escape (``\\x1b``, ``\\n``, ``\\u2028``).

    Idempotent (a backslash is left as it is), so text escaped when it was received may be
    escaped again when it is shown.
    """
    if text.isprintable():
        return text
    return "".join(_escape(char) for char in text)


def _escape(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    if unicodedata.category(char) in _UNSAFE_CATEGORIES or char in _BIDI_CONTROLS:
        code = ord(char)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    return char
