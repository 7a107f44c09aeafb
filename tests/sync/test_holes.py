"""The hole rule shared by node links and the simulator (sync/holes.py)."""

from __future__ import annotations

from feral.sync.holes import HoleRepair
from feral.sync.types import NodeId

A, B = NodeId("a" * 32), NodeId("b" * 32)


def test_fewer_entries_at_an_equal_stamp_is_a_hole_asked_for_from_the_start():
    repair = HoleRepair()
    found = repair.check({A: 9, B: 5}, {A: 3, B: 2}, {A: 9, B: 5}, {A: 4, B: 2})
    assert found.holes == {A} and not found.diverged
    assert found.request({A: 9, B: 5}) == {A: 0, B: 5}
    assert repair.repairing == {A}


def test_counts_at_different_stamps_or_more_entries_here_are_no_hole():
    repair = HoleRepair()
    assert not repair.check({A: 9}, {A: 3}, {A: 10}, {A: 8}).holes  # the peer is ahead
    assert not repair.check({A: 9}, {A: 5}, {A: 9}, {A: 4}).holes  # the peer has the hole


def test_a_hole_still_there_after_its_re_sent_stream_is_divergence():
    repair = HoleRepair()
    repair.check({A: 9}, {A: 3}, {A: 9}, {A: 4})
    assert repair.page(A, 0)  # the stream from the start has begun: merged whole
    again = repair.check({A: 9}, {A: 3}, {A: 9}, {A: 4})
    assert again.diverged and again.holes == {A}


def test_a_closed_hole_is_forgotten_once_its_stream_was_seen():
    repair = HoleRepair()
    repair.check({A: 9}, {A: 3}, {A: 9}, {A: 4})
    repair.page(A, 0)
    closed = repair.check({A: 9}, {A: 4}, {A: 9}, {A: 4})
    assert not closed.holes and not closed.ask and not closed.diverged
    assert repair.repairing == set() and not repair.busy


def test_a_caught_up_sent_before_the_peer_read_the_request_judges_nothing():
    """The peer's CaughtUp that crossed our request still shows the hole: not divergence, and
    not a second request (the stream is on its way)."""
    repair = HoleRepair()
    repair.check({A: 9}, {A: 3}, {A: 9}, {A: 4})
    assert not repair.page(B, 0)  # another origin's page is no part of the repair
    assert repair.page(A, 7)  # a page of A that left before the request: merged, not the stream
    crossed = repair.check({A: 9}, {A: 3}, {A: 9}, {A: 4})
    assert not crossed.diverged and not crossed.ask
    assert repair.busy


def test_a_second_hole_asks_again_for_every_origin_still_waiting():
    """A Vector resets every cursor of the peer, so it must name each waiting origin at 0."""
    repair = HoleRepair()
    repair.check({A: 9, B: 5}, {A: 3, B: 2}, {A: 9, B: 4}, {A: 4, B: 2})
    found = repair.check({A: 9, B: 5}, {A: 3, B: 2}, {A: 9, B: 5}, {A: 4, B: 3})
    assert found.holes == {B} and found.ask == {A, B}
    assert found.request({A: 9, B: 5}) == {A: 0, B: 0}


def test_a_hole_left_because_the_peer_took_entries_back_meanwhile_is_asked_for_again():
    """The peer was repairing its own copy from a third node while it streamed to us: its count
    grew below the stream's cursor. Not divergence: ask again (its count only grows)."""
    repair = HoleRepair()
    repair.check({A: 9}, {A: 3}, {A: 9}, {A: 4})
    repair.page(A, 0)
    again = repair.check({A: 9}, {A: 4}, {A: 9}, {A: 6})
    assert not again.diverged and again.ask == {A} and repair.repairing == {A}
    assert not repair.check({A: 9}, {A: 4}, {A: 9}, {A: 6}).ask  # crossed: still waiting
    repair.page(A, 0)
    assert repair.check({A: 9}, {A: 4}, {A: 9}, {A: 6}).diverged  # the same count: stuck
