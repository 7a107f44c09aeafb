"""Pruning's rules (storage/log/prune.py) on a real database: who holds it back, and what goes."""

from __future__ import annotations

from feral.storage.db.connection import Connection
from feral.storage.link import peers
from feral.storage.log import delta_log, prune, snapshot
from feral.storage.store import run_write
from feral.sync.delta import Delta
from feral.sync.types import NodeId, RowId

ME = NodeId("a" * 32)
PEER = NodeId("b" * 32)
DAY = prune.DAY_MS
NOW = 1_700_000_000_000 + 100 * DAY
WINDOW = 30 * DAY


def fact(row_id: str, day: int, *, tombstone: bool = False) -> Delta:
    hlc = (NOW - day * DAY) << 16
    values = None if tombstone else (row_id, "s", "p", "o", 1.0, None, 0, False)
    return Delta("facts", RowId(row_id), hlc, ME, values)


def write(conn: Connection, *deltas: Delta) -> None:
    run_write(conn, delta_log.apply_deltas, list(deltas))


def prune_now(conn: Connection) -> prune.PrunePlan:
    return run_write(conn, prune.apply_prune, paired=[PEER], now_ms=NOW, window_ms=WINDOW)


def peer_heard(conn: Connection, days_ago: int, holds: dict[NodeId, int]) -> None:
    run_write(conn, peers.record_sync, PEER, holds, NOW - days_ago * DAY)


def test_a_peer_heard_from_within_the_window_holds_back_what_it_lacks(conn: Connection) -> None:
    old, older = fact("r1", 60), fact("r2", 50)
    write(conn, old, older)
    peer_heard(conn, 1, {ME: old.hlc})  # it holds r1's entry, not r2's
    done = prune_now(conn)
    assert done.entries == 1
    assert [h for (h,) in conn.execute("SELECT hlc FROM delta_log")] == [older.hlc]
    assert snapshot.log_floors(conn) == {ME: old.hlc}
    assert delta_log.log_entry_counts(conn) == {ME: 2}  # counts keep what was taken
    assert snapshot.needs_snapshot(conn, {}, -1)  # a peer holding nothing now needs the rows


def test_a_peer_silent_longer_than_the_window_holds_nothing_back(conn: Connection) -> None:
    write(conn, fact("r1", 60), fact("r2", 50), fact("r3", 1))
    peer_heard(conn, 31, {})
    plan = run_write(conn, prune.plan_prune, paired=[PEER], now_ms=NOW, window_ms=WINDOW)
    assert plan.entries == 2 and plan.oldest_unacknowledged is not None
    assert not plan.oldest_unacknowledged.holds
    assert prune_now(conn).entries == 2  # the entry younger than the window stays
    assert conn.execute("SELECT count(*) FROM delta_log").fetchone()[0] == 1


def test_a_tombstones_entry_goes_only_once_acknowledged_and_older_than_the_window(
    conn: Connection,
) -> None:
    """The tombstone rows themselves stay (no words, and they stop a late write bringing the
    row back: storage/log/prune.py); their log entries go under the rule of every entry."""
    write(conn, fact("r1", 60), fact("r2", 60))
    young, old = fact("r1", 10, tombstone=True), fact("r2", 40, tombstone=True)
    write(conn, young, old)
    peer_heard(conn, 1, {ME: young.hlc - 1})  # it has not acknowledged the young tombstone
    assert prune_now(conn).tombstones == 1
    left = {r for (r,) in conn.execute("SELECT id FROM facts WHERE deleted = 1")}
    assert left == {"r1", "r2"}  # both rows stay
    logged = {r for (r,) in conn.execute("SELECT row_id FROM delta_log WHERE payload IS NULL")}
    assert logged == {"r1"}  # r2's old tombstone's entry went, r1's young one stays
    peer_heard(conn, 1, {ME: young.hlc})
    assert prune_now(conn).tombstones == 0  # acknowledged, but younger than the window
