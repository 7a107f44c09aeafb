"""Close reasons (node/links/transport.py): they quote the peer, and must still fit a close
frame."""

from __future__ import annotations

from feral.node.links.transport import MAX_CLOSE_REASON_BYTES, close_reason


def test_a_short_reason_is_kept_as_it_is() -> None:
    assert close_reason("no progress for 30 s") == "no progress for 30 s"


def test_a_non_ascii_reason_is_cut_by_bytes_on_a_character_boundary() -> None:
    reason = close_reason("malformed node id '" + "é" * 200 + "'")

    assert len(reason.encode("utf-8")) <= MAX_CLOSE_REASON_BYTES
    assert reason.startswith("malformed node id 'é") and reason.endswith("é")


def test_a_lone_surrogate_cannot_break_the_close_frame() -> None:
    assert close_reason("bad \ud800 text") == "bad ? text"
