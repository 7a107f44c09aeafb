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


def test_a_hole_still_there_after_its_repair_is_divergence_and_a_closed_one_is_forgotten():
    repair = HoleRepair()
    repair.check({A: 9}, {A: 3}, {A: 9}, {A: 4})
    again = repair.check({A: 9}, {A: 3}, {A: 9}, {A: 4})
    assert again.diverged and again.holes == {A}
    closed = repair.check({A: 9}, {A: 4}, {A: 9}, {A: 4})
    assert not closed.holes and repair.repairing == set()
