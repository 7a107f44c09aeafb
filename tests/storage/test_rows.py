"""storage/db/rows.py: each row shape has exactly the keys and value types storage builds."""

from __future__ import annotations

from typing import Any, get_type_hints

import pytest

from feral.storage.db.connection import Connection
from feral.storage.db.rows import EpisodeRow, ExecutionRow, FactRow
from feral.storage.memory.memories import (
    add_episode,
    find_row,
    list_episodes,
    log_execution,
    nuke,
    remember_fact,
)
from feral.storage.store import run_write
from feral.sync.hlc import HybridClock
from feral.sync.ids import new_ulid
from feral.sync.schema import EPISODES, EXEC_LOG, FACTS, Table

from .support import T0, A, ManualClock

SHAPES: list[tuple[type[Any], Table]] = [
    (FactRow, FACTS),
    (EpisodeRow, EPISODES),
    (ExecutionRow, EXEC_LOG),
]


def assert_fits(row: dict[str, Any], shape: type[Any]) -> None:
    """``row`` has every key of ``shape``, no other, and a value of each key's type."""
    hints = get_type_hints(shape)
    assert set(row) == set(hints) == set(shape.__required_keys__)
    for key, expected in hints.items():
        assert isinstance(row[key], expected), (key, row[key], expected)


@pytest.mark.parametrize(("shape", "table"), SHAPES, ids=lambda v: getattr(v, "__name__", ""))
def test_each_shape_names_its_tables_columns_and_the_clock_fields(shape: type[Any], table: Table):
    assert set(get_type_hints(shape)) == {*table.column_names, "hlc", "origin", "deleted", "tier"}


def test_the_rows_each_write_returns_fit_their_shapes(conn: Connection):
    clock = HybridClock(A, ManualClock())
    fact = run_write(conn, remember_fact, A, clock.tick, ("sky", "is", "blue"), now_ms=T0)
    episode = run_write(
        conn,
        add_episode,
        A,
        clock.tick,
        new_ulid(T0, bytes(10)),
        session_id="s",
        summary="talked about the sky",
        entities=["sky"],
        now_ms=T0,
    )
    call = run_write(
        conn,
        log_execution,
        A,
        clock.tick,
        new_ulid(T0, bytes(range(10))),
        session_id="s",
        tool="search",
        args={"q": "sky"},
        result=[],
        latency_ms=3,
        success=True,
        now_ms=T0,
    )
    assert_fits(dict(fact), FactRow)
    assert_fits(dict(episode), EpisodeRow)
    assert_fits(dict(call), ExecutionRow)
    assert [dict(e) for e in list_episodes(conn, 10)] == [dict(episode)]


def test_a_tombstone_still_fits_its_shape(conn: Connection):
    clock = HybridClock(A, ManualClock())
    fact = run_write(conn, remember_fact, A, clock.tick, ("gone", "for", "good"), now_ms=T0)
    run_write(conn, nuke, A, clock.tick, fact["id"])
    _, row = find_row(conn, fact["id"], live_only=False)
    assert row["deleted"] is True
    assert_fits(row, FactRow)
