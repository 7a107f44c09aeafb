"""sync/text.py: a peer's text made safe to print."""

from __future__ import annotations

from hypothesis import given, strategies as st

from feral.sync.text import printable


def test_printable_text_is_returned_as_it_is():
    assert printable("peer refused: clock_skew — ahead by 4 min ✓ 😀 é") == (
        "peer refused: clock_skew — ahead by 4 min ✓ 😀 é"
    )


def test_control_characters_are_escaped():
    assert printable("\x1b[31mred\nforged line\r\t\x07\x00\x7f\x85") == (
        "\\x1b[31mred\\nforged line\\r\\t\\x07\\x00\\x7f\\x85"
    )


def test_line_separators_and_bidi_controls_are_escaped():
    assert printable("a\u2028b\u2029c\u202ed\u2066e\u200f") == (
        "a\\u2028b\\u2029c\\u202ed\\u2066e\\u200f"
    )


def test_a_space_that_is_not_printable_to_python_stays():
    assert printable("no\u00a0break") == "no\u00a0break"


@given(st.text())
def test_printable_is_idempotent_and_leaves_no_control_character(text):
    once = printable(text)
    assert printable(once) == once
    assert all(ord(c) >= 0x20 and not 0x7F <= ord(c) < 0xA0 for c in once)
    assert "\u2028" not in once and "\u202e" not in once
