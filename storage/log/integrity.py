"""Integrity alarms: an entry that collides with one this node holds (docs/REPLICATION.md §5).

Each origin stamps its own writes with strictly increasing HLCs, so ``(origin, hlc)`` names one
write. An incoming entry with a name this log already holds but other content (another table,
row or values) means one of the two is forged, or its origin reused a stamp. Without per-origin
signatures this node cannot tell which copy is the real one, only that the mesh disagrees, so it
keeps the copy it took first, never applies or logs the other, and never drops it silently
either: each collision is recorded here, per origin, stamp and the peer that sent it, for
``feral sync status`` and the serve log.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypedDict

from feral.storage.db.connection import Connection
from feral.sync.codec import decode_values
from feral.sync.delta import Delta
from feral.sync.schema import Value, table_by_name
from feral.sync.types import NodeId

__all__ = [
    "IntegrityAlarms",
    "LatestAlarm",
    "alarm_counts",
    "alarm_summary",
    "find_collisions",
    "record_collisions",
    "withdraw_outgrown",
]


def find_collisions(conn: Connection, origin: NodeId, deltas: Sequence[Delta]) -> list[Delta]:
    """Those of ``deltas`` (all of ``origin``) whose stamp the log holds with other content.

    One range query per call: a page holds one origin's entries in stamp order.
    """
    if not deltas:
        return []
    held = {
        hlc: (code, row_id, payload)
        for hlc, code, row_id, payload in conn.execute(
            "SELECT hlc, tbl, row_id, payload FROM delta_log "
            "WHERE origin = ? AND hlc BETWEEN ? AND ?",
            (origin, min(d.hlc for d in deltas), max(d.hlc for d in deltas)),
        )
    }
    return [
        d
        for d in deltas
        if d.hlc in held and not _same(d, *held[d.hlc]) and not _erased_copy(conn, d, held[d.hlc])
    ]


def _erased_copy(conn: Connection, delta: Delta, held: tuple[int, str, bytes | None]) -> bool:
    """Whether the held entry is ``delta`` with its words erased by a nuke (storage/log/erase.py).

    A nuke drops the payload of every entry of its row (a tombstone wins over every write of
    its row, sync/merge.py), so a peer that has not heard of the tombstone yet may send such an
    entry with its words, and one that has may send our entry erased: the same write, not a
    collision, as long as this log holds another entry of the row without payload (the
    tombstone, or an entry it erased, at any stamp), or this node's row is dead or has outgrown
    the write.
    Before either, the copies cannot be told from a forged tombstone, and the alarm goes when
    the tombstone arrives (storage/log/erase.py).
    """
    if not _erasure_apart(delta, held):
        return False
    return _erased_above(conn, held[0], held[1], delta) or _row_explains(conn, delta)


def _erasure_apart(delta: Delta, held: tuple[int, str, bytes | None]) -> bool:
    """Whether ``delta`` and the held entry at its stamp are of the same row, one of the two
    without its words (so they differ, if at all, only by a nuke's erasure)."""
    code, row_id, payload = held
    if row_id != delta.row_id or table_by_name(delta.table).code != code:
        return False
    return (payload is None) != (delta.values is None)


def _row_explains(conn: Connection, delta: Delta) -> bool:
    """Whether this node's row of ``delta`` explains a copy that differs only by its words:
    one read of the row.

    * The row is a tombstone: every entry of a dead row is erased here (storage/log/erase.py),
      whichever copy arrives, and tombstone rows are kept for good (storage/log/prune.py) while
      the log entries that would otherwise explain the copy may be pruned.
    * The row is at a newer version than the write: the write lost here whatever its copy
      holds, and the tombstone that would explain an erased copy may never come (a device that
      had the write first erased it; docs/REPLICATION.md §5, Collisions).

    Either way the copy changes nothing here.
    """
    name = table_by_name(delta.table).name
    explained = conn.execute(
        f'SELECT 1 FROM "{name}" WHERE id = ? AND (deleted = 1 OR (hlc, origin) > (?, ?))',
        (delta.row_id, delta.hlc, delta.origin),
    ).fetchone()
    return explained is not None


def _erased_above(conn: Connection, code: int, row_id: str, delta: Delta) -> bool:
    newer = conn.execute(_ERASED_ABOVE, (code, row_id, delta.hlc, delta.origin)).fetchone()
    return newer is not None


_ERASED_ABOVE = (
    "SELECT 1 FROM delta_log WHERE tbl = ? AND row_id = ? AND payload IS NULL "
    "AND (hlc, origin) != (?, ?) LIMIT 1"
)
"""A tombstone (or an erased entry) of the row at another stamp than the write's: one probe of
the log's partial index of entries without payload (migration 0010)."""


def _same(delta: Delta, code: int, row_id: str, payload: bytes | None) -> bool:
    """Whether ``delta`` is the stored entry: same table, row and values, types included
    (``True == 1`` in Python, but a bool and an int are different writes)."""
    if table_by_name(delta.table).code != code or delta.row_id != row_id:
        return False
    if payload is None or delta.values is None:
        return payload is None and delta.values is None
    return _same_values(tuple(decode_values(payload)), tuple(delta.values))


def _same_values(ours: tuple[Value, ...], theirs: tuple[Value, ...]) -> bool:
    return len(ours) == len(theirs) and all(
        type(a) is type(b) and a == b for a, b in zip(ours, theirs, strict=True)
    )


def record_collisions(conn: Connection, deltas: Sequence[Delta], peer: str, now_ms: int) -> None:
    """Count each colliding entry under its origin, stamp and sender (inside the page's write),
    noting which differ from the held entry only by a nuke's erasure (all copies of that stamp
    from that sender: one with other content makes it a forgery)."""
    conn.executemany(
        "INSERT INTO integrity_alarms(origin, hlc, peer, tbl, row_id, first_at, last_at, count, "
        "erased) VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?) ON CONFLICT(origin, hlc, peer) DO UPDATE SET "
        "last_at = excluded.last_at, count = count + 1, erased = min(erased, excluded.erased)",
        [
            (
                d.origin,
                d.hlc,
                peer,
                table_by_name(d.table).code,
                d.row_id,
                now_ms,
                now_ms,
                int(_differs_by_erasure(conn, d)),
            )
            for d in deltas
        ],
    )


def _differs_by_erasure(conn: Connection, delta: Delta) -> bool:
    """:func:`_erasure_apart` for a colliding entry (a rare path: one read of the held entry):
    a nuke's tombstone may yet explain it, or the row move past it."""
    held = conn.execute(
        "SELECT tbl, row_id, payload FROM delta_log WHERE origin = ? AND hlc = ?",
        (delta.origin, delta.hlc),
    ).fetchone()
    return held is not None and _erasure_apart(delta, (int(held[0]), str(held[1]), held[2]))


_ANY_ERASED_COPY = "SELECT 1 FROM integrity_alarms WHERE erased = 1 LIMIT 1"

_WITHDRAW_OUTGROWN = """
DELETE FROM integrity_alarms WHERE erased = 1 AND tbl = ?1 AND NOT EXISTS (
  SELECT 1 FROM "{table}" AS t WHERE t.id = integrity_alarms.row_id
    AND (t.hlc, t.origin) <= (integrity_alarms.hlc, integrity_alarms.origin))
"""
"""Alarms on erased copies whose row here is no longer at their write: written again since, or
dropped as collected (a snapshot's rule)."""


def withdraw_outgrown(conn: Connection, tables: Iterable[str]) -> None:
    """Withdraw the alarms on copies that differed only by erasure, of writes the rows of
    ``tables`` have moved past here (inside the write that moved them).

    Such a copy could change nothing once its write lost here, and the tombstone that would
    explain it may never come: the one that erased it may be collected, or outdated by the very
    write that moved the row (a snapshot carries rows, not the entries between). One probe of
    the alarms, nearly always empty, when there is nothing to withdraw.
    """
    if conn.execute(_ANY_ERASED_COPY).fetchone() is None:
        return
    for name in tables:
        conn.execute(_WITHDRAW_OUTGROWN.format(table=name), (table_by_name(name).code,))


def alarm_counts(conn: Connection) -> dict[str, int]:
    """Per sending peer, how many colliding entries it has sent (``""``: sender unknown)."""
    return {
        str(peer): int(n)
        for peer, n in conn.execute("SELECT peer, sum(count) FROM integrity_alarms GROUP BY peer")
    }


class LatestAlarm(TypedDict):
    origin: str
    hlc: int
    peer: str
    row_id: str
    at: int


class IntegrityAlarms(TypedDict):
    """How many colliding entries arrived in all, and the latest one."""

    count: int
    latest: LatestAlarm | None


def alarm_summary(conn: Connection) -> IntegrityAlarms:
    """How many colliding entries arrived in all, and the latest one (``None`` if none)."""
    total = conn.execute("SELECT coalesce(sum(count), 0) FROM integrity_alarms").fetchone()[0]
    last = conn.execute(
        "SELECT origin, hlc, peer, row_id, last_at FROM integrity_alarms "
        "ORDER BY last_at DESC, origin, hlc LIMIT 1"
    ).fetchone()
    latest: LatestAlarm | None = None
    if last is not None:
        origin, hlc, peer, row_id, at = last
        latest = {"origin": origin, "hlc": hlc, "peer": peer, "row_id": row_id, "at": at}
    return {"count": int(total), "latest": latest}
