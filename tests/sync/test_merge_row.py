"""``merge_row``, the reference merge every store is held to (sync/merge.py), as properties over
any history of writes to one row: every order of arrival ends in the same row, which is the
latest write, or a tombstone at the latest version once any write was one."""

from __future__ import annotations

import functools
import random

from hypothesis import given, strategies as st

from feral.sync.delta import Delta
from feral.sync.merge import merge_row

from .test_merge import A, B, row, tomb, write_histories


def merged(deltas: list[Delta]) -> Delta | None:
    return functools.reduce(merge_row, deltas, None)


@given(write_histories(), st.randoms(use_true_random=False))
def test_every_order_of_arrival_merges_to_the_same_row(
    history: list[Delta], rng: random.Random
) -> None:
    shuffled = list(history)
    rng.shuffle(shuffled)
    assert merged(shuffled) == merged(history)


@given(write_histories())
def test_the_row_is_the_latest_write_or_a_tombstone_at_the_latest_version(
    history: list[Delta],
) -> None:
    latest = max(history, key=lambda delta: delta.version)
    result = merged(history)
    assert result is not None
    assert result.version == latest.version
    assert result.prior == latest.prior
    if any(delta.is_tombstone for delta in history):
        assert result.is_tombstone
    else:
        assert result == latest


@given(write_histories())
def test_merging_a_row_with_itself_or_a_write_it_holds_changes_nothing(
    history: list[Delta],
) -> None:
    result = merged(history)
    assert result is not None
    assert merge_row(result, result) == result
    for delta in history:
        assert merge_row(result, delta) == result


def test_an_older_tombstone_erases_a_later_write_at_the_later_version() -> None:
    later = row(5, B)
    result = merge_row(later, tomb(2, A))
    assert result.is_tombstone and result.version == later.version
    assert merge_row(tomb(2, A), later) == result


def test_the_first_write_of_a_row_is_the_row() -> None:
    first = row(1, A)
    assert merge_row(None, first) is first
