"""Entries held back per origin below the receiver's limit (sync/held_back.py)."""

from __future__ import annotations

from feral.sync.held_back import SEND_MARGIN_MS, beyond, same_holdings, send_ceiling, take_limit
from feral.sync.hlc import COUNTER_BITS, check_skew
from feral.sync.messages import CaughtUp
from feral.sync.types import NodeId

WINDOW = 300_000
NOW = 1_700_000_000_000
A, B = NodeId("a" * 32), NodeId("b" * 32)


def stamp(wall_ms: int) -> int:
    return wall_ms << COUNTER_BITS


def test_the_ceiling_sends_nothing_the_receiver_would_refuse() -> None:
    for offset in (-WINDOW, 0, WINDOW):
        ceiling = send_ceiling(NOW, offset, WINDOW)
        check_skew(ceiling, NOW + offset, WINDOW)  # the top stamp sent is taken
        assert ceiling >> COUNTER_BITS == NOW + offset + 2 * WINDOW - SEND_MARGIN_MS


def test_what_the_sender_holds_back_the_receiver_excuses() -> None:
    assert take_limit(NOW, WINDOW) < send_ceiling(NOW, 0, WINDOW)


def test_holdings_that_differ_only_by_origins_held_back_are_the_same() -> None:
    ahead = stamp(NOW + 3_600_000)
    ours = CaughtUp({A: ahead, B: stamp(NOW)}, {A: 2, B: 1})
    theirs = CaughtUp({A: stamp(NOW - 5), B: stamp(NOW)}, {A: 1, B: 1})
    ceiling, limit = send_ceiling(NOW, 0, WINDOW), take_limit(NOW, WINDOW)
    assert same_holdings(ours, theirs, ceiling, None)  # we hold A back from the peer
    assert same_holdings(theirs, ours, None, limit)  # the peer holds A back from us
    assert beyond(ours.vector, theirs.vector, limit) == {A: ahead}


def test_a_difference_no_clock_explains_is_not_the_same() -> None:
    ours = CaughtUp({A: stamp(NOW), B: stamp(NOW)}, {A: 2, B: 1})
    theirs = CaughtUp({A: stamp(NOW - 5), B: stamp(NOW)}, {A: 1, B: 1})
    ceiling, limit = send_ceiling(NOW, 0, WINDOW), take_limit(NOW, WINDOW)
    assert not same_holdings(ours, theirs, ceiling, limit)
    hole = CaughtUp({A: stamp(NOW), B: stamp(NOW)}, {A: 1, B: 1})
    assert not same_holdings(ours, hole, ceiling, limit)  # equal stamps, other counts
    assert not same_holdings(ours, None, ceiling, limit)
