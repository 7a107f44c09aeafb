from __future__ import annotations

import itertools
from collections.abc import Iterable

import pytest
from hypothesis import given, settings, strategies as st

from feral.sync.delta import Delta, Version
from feral.sync.merge import Decision, decide, wins
from feral.sync.types import NodeId, RowId

A = NodeId("a" * 32)
B = NodeId("b" * 32)
C = NodeId("c" * 32)
ORIGINS = (A, B, C, NodeId("2" * 32), NodeId("z" * 31 + "7"))


def row(hlc: int, origin: NodeId) -> Delta:
    """A full write of row r1, whose content names its version so that rows can be told apart."""
    values = ("r1", f"written at {hlc} by {origin}", "likes", "tea", 0.5, None, hlc, False)
    return Delta("facts", RowId("r1"), hlc, origin, values)


def tomb(hlc: int, origin: NodeId) -> Delta:
    return Delta("facts", RowId("r1"), hlc, origin, None)


def fold(deltas: Iterable[Delta], start: Delta | None = None) -> Delta | None:
    """A row as the merge builds it: each delta replaces the row when ``decide`` says so."""
    current = start
    for delta in deltas:
        if decide(None if current is None else current.version, delta) is Decision.APPLY:
            current = delta
    return current


def merge_rows(*rows: Delta | None) -> Delta | None:
    """Merge whole replicas' rows (state-based), using the same decision."""
    return fold(r for r in rows if r is not None)


@st.composite
def write_histories(draw: st.DrawFn) -> list[Delta]:
    """A multiset of deltas to one row; stamps and origins collide often and duplicates recur.

    A node never stamps two writes with one HLC, so one ``(hlc, origin)`` always names the
    same delta: the pool maps each version to exactly one write.
    """
    origins = draw(st.lists(st.sampled_from(ORIGINS), min_size=1, max_size=3, unique=True))
    deleted = draw(st.integers(0, (1 << (4 * len(origins))) - 1))  # which writes are tombstones
    pool = {}
    for i, (hlc, origin) in enumerate(itertools.product(range(1, 5), origins)):
        make = tomb if deleted >> i & 1 else row
        pool[Version(hlc, origin)] = make(hlc, origin)
    chosen = draw(st.lists(st.sampled_from(sorted(pool)), min_size=1, max_size=12))
    return [pool[v] for v in chosen]


versions = st.builds(Version, st.integers(1, 10), st.sampled_from(ORIGINS))


# decide and wins on single pairs


def test_newer_hlc_wins_over_older():
    assert decide(Version(1, C), row(2, A)) is Decision.APPLY
    assert decide(Version(2, A), row(1, C)) is Decision.SKIP


def test_anything_wins_over_an_empty_row():
    assert decide(None, row(1, A)) is Decision.APPLY
    assert decide(None, tomb(1, A)) is Decision.APPLY
    assert wins(Version(1, A), None)


def test_equal_hlc_and_origin_is_skipped():
    assert decide(Version(5, B), row(5, B)) is Decision.SKIP
    assert decide(Version(5, B), tomb(5, B)) is Decision.SKIP


@pytest.mark.parametrize("arrivals", [[row(5, A), row(5, B)], [row(5, B), row(5, A)]])
def test_equal_hlc_is_won_by_the_higher_origin_whatever_the_arrival_order(arrivals):
    assert fold(arrivals) == row(5, B)


@pytest.mark.parametrize(
    ("low", "high"),
    [(row(5, A), tomb(5, B)), (tomb(5, A), row(5, B))],
    ids=["tombstone-higher", "update-higher"],
)
def test_tombstone_against_update_at_equal_hlc_is_won_by_the_higher_origin(low, high):
    assert fold([low, high]) == high
    assert fold([high, low]) == high


def test_an_older_write_cannot_resurrect_a_deleted_row():
    assert fold([tomb(5, A), row(4, C)]) == tomb(5, A)
    assert fold([row(4, C), tomb(5, A)]) == tomb(5, A)


def test_a_newer_write_replaces_a_tombstone():
    assert fold([tomb(5, C), row(6, A)]) == row(6, A)


@given(versions, versions)
def test_exactly_one_of_two_different_versions_wins(a, b):
    if a == b:
        assert not wins(a, b)
    else:
        assert wins(a, b) != wins(b, a)
        assert wins(a, b) == ((a.hlc, a.origin) > (b.hlc, b.origin))


@given(versions)
def test_nothing_wins_over_itself(version):
    assert not wins(version, version)


# the row as a fold of deltas


@settings(max_examples=120)
@given(st.data())
def test_any_arrival_order_of_any_multiset_gives_the_same_row(data):
    history = data.draw(write_histories())
    shuffled = data.draw(st.permutations(history))
    assert fold(shuffled) == fold(history)


@given(write_histories())
def test_the_row_ends_as_the_delta_with_the_greatest_version(history):
    final = fold(history)
    assert final is not None
    assert final.version == max(d.version for d in history)
    assert final in history


@given(write_histories())
def test_applying_deltas_again_changes_nothing(history):
    final = fold(history)
    assert fold(history + history) == final
    assert fold(history, start=final) == final
    assert final is not None and decide(final.version, final) is Decision.SKIP


@given(st.data())
def test_merging_replicas_is_associative(data):
    history = data.draw(write_histories())
    i = data.draw(st.integers(0, len(history)))
    j = data.draw(st.integers(i, len(history)))
    a, b, c = fold(history[:i]), fold(history[i:j]), fold(history[j:])
    left = merge_rows(merge_rows(a, b), c)
    right = merge_rows(a, merge_rows(b, c))
    assert left == right == fold(history)


@given(st.data())
def test_merging_replicas_is_commutative(data):
    history = data.draw(write_histories())
    on_first = data.draw(st.lists(st.booleans(), min_size=len(history), max_size=len(history)))
    a = fold(d for d, first in zip(history, on_first, strict=True) if first)
    b = fold(d for d, first in zip(history, on_first, strict=True) if not first)
    assert merge_rows(a, b) == merge_rows(b, a) == fold(history)
