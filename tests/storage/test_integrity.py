"""Collisions: an entry under a held (origin, hlc) with other content (storage/log/integrity.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from feral.storage.db.connection import Connection
from feral.storage.log.delta_log import apply_deltas, apply_page
from feral.storage.log.integrity import alarm_counts, alarm_summary, find_collisions
from feral.storage.store import open_sync, run_write
from feral.sync.delta import Delta, Page
from feral.sync.hlc import COUNTER_BITS
from feral.sync.types import RowId

from .support import T0, WINDOW_MS, A, snapshot

HLC = T0 << COUNTER_BITS
ROW = RowId("f" + "1" * 31)
VALUES = (ROW, "alice", "likes", "tea", 1.0, None, T0, False)


@pytest.fixture
def conn() -> Iterator[Connection]:
    db = open_sync(":memory:")
    run_write(db, apply_deltas, [Delta("facts", ROW, HLC, A, VALUES)])
    yield db
    db.close()


def fact(rest: tuple[object, ...] | None = VALUES[1:], row_id: RowId = ROW) -> Delta:
    values = None if rest is None else (row_id, *rest)
    return Delta("facts", row_id, HLC, A, values)  # type: ignore[arg-type]


def test_the_entry_held_is_no_collision(conn: Connection) -> None:
    assert find_collisions(conn, A, [fact()]) == []


@pytest.mark.parametrize(
    "forged",
    [
        fact(("alice", "likes", "coffee", 1.0, None, T0, False)),
        fact(("alice", "likes", "tea", 1.0, None, T0, 0)),  # an int is not the bool it equals
        fact(None),  # a tombstone is not the write
        fact(row_id=RowId("f" + "2" * 31)),
        Delta("episodes", ROW, HLC, A, (ROW, "s", "tea", "[]", T0, False)),
    ],
    ids=["other_value", "int_for_bool", "tombstone", "other_row", "other_table"],
)
def test_other_content_under_a_held_stamp_is_a_collision(conn: Connection, forged: Delta) -> None:
    assert find_collisions(conn, A, [forged]) == [forged]


@pytest.mark.parametrize("repair", [False, True])
def test_a_colliding_page_is_acknowledged_counted_and_never_applied(
    conn: Connection, repair: bool
) -> None:
    forged = fact(row_id=RowId("f" + "2" * 31))
    before = snapshot(conn)
    collided: list[Delta] = []
    applied = run_write(conn, apply_page, Page(A, 0, (forged,)), now_ms=T0,
                        max_skew_ms=WINDOW_MS, peer="bob", repair=repair,
                        collided=collided)  # fmt: skip
    assert (applied, collided) == (0, [forged])
    assert snapshot(conn) == before
    assert alarm_counts(conn) == {"bob": 1}
    latest = alarm_summary(conn)["latest"]
    assert (latest["origin"], latest["hlc"], latest["row_id"]) == (A, HLC, forged.row_id)
