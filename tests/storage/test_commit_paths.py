"""storage/memory/local_commit.py: the batch path of ``commit_local`` held to the row-by-row path.

A batch of many rows of one table is checked a column at a time and its stamps one by one
(``_stamp_batch``); everything else goes delta by delta (``_stamp_each``, the definition). The
properties draw batches with faults of every kind (bad values, ids, tables, shapes, stamps)
and require the same deltas, the same calls to the clock and the same error from both; on real
database files, a batch committed whole writes what its rows committed one at a time write,
and a refused batch leaves the database as it was.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from feral.storage.db.connection import Connection
from feral.storage.log.delta_log import clock_high_water
from feral.storage.memory.local_commit import (
    _BATCH_CHECK_MIN,
    Change,
    _batch,
    _stamp_each,
    commit_local,
    stamp_changes,
)
from feral.storage.store import open_sync, run_write
from feral.sync.errors import ClockError
from feral.sync.hlc import MAX_PACKED
from feral.sync.schema import FACTS, TABLES
from feral.sync.types import NodeId, RowId

from ..sync.strategies import row_ids, rows
from ..sync.test_fast_paths import anything, misfits, outcome
from .support import A, assert_unchanged, snapshot

BAD_STAMPS = [0, -1, MAX_PACKED + 1, 1 << 80, True, 1.5, "7", None]


class RecordingStamp:
    """A clock that records each floor it is given; one stamp may be bad, or may raise."""

    def __init__(self, fault_at: int | None = None, fault: object = None) -> None:
        self.floors: list[object] = []
        self.fault_at = fault_at
        self.fault = fault

    def __call__(self, floor: int) -> int:
        self.floors.append(floor)
        if len(self.floors) - 1 == self.fault_at:
            if self.fault == "raise":
                raise ClockError("the clock is too far ahead")
            return self.fault  # type: ignore[return-value]
        return floor + 1


@st.composite
def batches(draw: st.DrawFn, faults: bool = True) -> list[Any]:
    """Changes of one table, long enough for the batch path; with ``faults``, some are broken."""
    table = draw(st.sampled_from(TABLES))
    ids = draw(st.lists(row_ids, min_size=_BATCH_CHECK_MIN, max_size=14))
    whole: list[Any] = [(table, i, draw(rows(table, i))) for i in ids]
    changes = list(whole)
    for _ in range(draw(st.integers(0, 2)) if faults else 0):
        at = draw(st.integers(0, len(changes) - 1))
        changes[at] = draw(broken(whole[at]))
    return changes


@st.composite
def broken(draw: st.DrawFn, change: tuple[Any, ...]) -> Any:
    """``change`` with one fault in it."""
    table, row_id, values = change
    kind = draw(st.sampled_from(["value", "length", "id", "table", "shape", "tombstone"]))
    if kind == "value":
        at = draw(st.integers(0, len(values) - 1))
        return table, row_id, (*values[:at], draw(misfits(table.columns[at])), *values[at + 1 :])
    if kind == "length":
        return table, row_id, values[:-1] if draw(st.booleans()) else (*values, None)
    if kind == "id":
        return table, draw(anything | row_ids), values
    if kind == "table":
        return draw(st.sampled_from([*TABLES, "facts", None])), row_id, values
    if kind == "shape":
        shapes = [[table, row_id, values], (table, row_id), (*change, None), iter(change)]
        return draw(st.sampled_from(shapes))
    return table, row_id, None


@st.composite
def stamps(draw: st.DrawFn) -> RecordingStamp:
    if draw(st.booleans()):
        return RecordingStamp()
    return RecordingStamp(draw(st.integers(0, 15)), draw(st.sampled_from([*BAD_STAMPS, "raise"])))


def copies(changes: list[Any]) -> tuple[list[Any], list[Any]]:
    """Two equal lists of changes: an iterator is used up by one reading, so each gets its own."""
    held = [tuple(c) if isinstance(c, Iterator) else None for c in changes]
    return tuple(  # type: ignore[return-value]
        [c if t is None else iter(t) for c, t in zip(changes, held, strict=True)] for _ in "ab"
    )


@pytest.mark.slow
@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(batches(), stamps(), st.sampled_from([A, A, NodeId("A" * 32), NodeId("")]))
def test_stamping_a_batch_gives_what_stamping_each_change_gives(changes, stamp, origin):
    fast_changes, slow_changes = copies(changes)
    slow_stamp = RecordingStamp(stamp.fault_at, stamp.fault)
    fast: list[Any] = []
    slow: list[Any] = []
    fast_outcome = outcome(lambda: fast.extend(stamp_changes(origin, stamp, 10, fast_changes)))
    slow_outcome = outcome(lambda: slow.extend(_stamp_each(origin, slow_stamp, 10, slow_changes)))
    assert fast_outcome == slow_outcome
    assert fast == slow
    assert stamp.floors == slow_stamp.floors


@given(batches(faults=False))
@pytest.mark.slow
def test_a_well_formed_batch_takes_the_batch_path(changes):
    # Otherwise the properties here would compare the row-by-row path with itself.
    assert _batch(A, changes) is not None
    assert _batch(A, changes[: _BATCH_CHECK_MIN - 1]) is None  # a short one goes row by row


# On database files


@contextmanager
def two_databases() -> Iterator[tuple[Connection, Connection]]:
    with tempfile.TemporaryDirectory(prefix="commit-") as name:
        first = open_sync(Path(name) / "batch.db", synchronous="NORMAL")
        second = open_sync(Path(name) / "each.db", synchronous="NORMAL")
        try:
            yield first, second
        finally:
            first.close()
            second.close()


@settings(max_examples=30, deadline=None)
@given(batches(faults=False))
@pytest.mark.slow
def test_a_batch_committed_whole_writes_what_its_rows_committed_one_at_a_time_write(changes):
    with two_databases() as (whole, each):
        written = run_write(whole, commit_local, A, RecordingStamp(), changes)
        one_by_one = [run_write(each, commit_local, A, RecordingStamp(), [c]) for c in changes]
        assert written == [d for deltas in one_by_one for d in deltas]
        assert snapshot(whole) == snapshot(each)


@settings(max_examples=30, deadline=None)
@given(batches(), stamps())
@pytest.mark.slow
def test_a_refused_batch_raises_what_the_row_by_row_path_raises_and_writes_nothing(changes, stamp):
    for_db, for_each = copies(changes)
    with two_databases() as (conn, _):
        run_write(conn, commit_local, A, RecordingStamp(), [fact_change("before")])
        floor, before = clock_high_water(conn), snapshot(conn)
        each_stamp = RecordingStamp(stamp.fault_at, stamp.fault)
        expected = outcome(lambda: _stamp_each(A, each_stamp, floor, for_each))
        assert outcome(lambda: run_write(conn, commit_local, A, stamp, for_db)) == expected
        if expected != ("ok", ""):
            assert_unchanged(before, conn)


def fact_change(row_id: str) -> Change:
    values = (RowId(row_id), "s", "p", "o", 0.5, None, 1, False)
    return FACTS, RowId(row_id), values


def test_a_batch_holding_a_change_given_as_an_iterator_is_written_as_row_by_row(tmp_path):
    # The batch test used to take every change apart, using an iterator up, and the batch then
    # failed to unpack it where the row-by-row path wrote it.
    changes: list[Any] = [fact_change(f"r{i}") for i in range(_BATCH_CHECK_MIN)]
    changes[3] = iter(changes[3])
    conn = open_sync(tmp_path / "feral.db", synchronous="NORMAL")
    try:
        written = run_write(conn, commit_local, A, RecordingStamp(), changes)
    finally:
        conn.close()
    assert [d.row_id for d in written] == [f"r{i}" for i in range(_BATCH_CHECK_MIN)]
