"""Local writes to a memory's meta row: its importance (a boost), its scope, a promotion.

Each goes through :func:`~feral.storage.memory.memory_model.write_meta`, so it replicates like any
write and merges last-write-wins on the meta row alone: a boost on one device and an archive of
the same memory on another, made while apart, both survive. What a write leaves out it keeps
(a boost keeps the scope, a scope change keeps the importance).
"""

from __future__ import annotations

from dataclasses import replace
from typing import cast

from feral.storage.db.connection import Connection
from feral.storage.db.rows import FactRow
from feral.sync.errors import InvalidInput, NotFoundError
from feral.sync.schema import EPISODES, FACTS
from feral.sync.types import NodeId

from .memories import Row, Stamp, find_row, nuke, remember_fact
from .memory_model import DEFAULT_SCOPE, Meta, read_meta, write_meta

__all__ = [
    "boost",
    "meta_of",
    "nuke_scope",
    "promote_fact",
    "remember_scoped",
    "set_scope",
]


def meta_of(conn: Connection, row: Row) -> Meta:
    """The meta of a stored memory (its defaults updated when the memory was created)."""
    return read_meta(conn, str(row["id"]), created_at=int(row.get("created_at") or 0))


def _memory(conn: Connection, row_id: str) -> Row:
    """A live memory with a meta row to hold: a fact or an episode, not a log entry."""
    table, row = find_row(conn, row_id)
    if not table.has_archive:
        raise NotFoundError(f"{row_id!r} is an execution-log entry, which has no importance")
    return row


def boost(
    conn: Connection, origin: NodeId, stamp: Stamp, row_id: str, importance: float, reason: str
) -> Meta:
    """Set a memory's importance multiplier (the caller checked its range) and why.

    Raises:
        NotFoundError: no live fact or episode has this id.
    """
    meta = meta_of(conn, _memory(conn, row_id))
    return write_meta(
        conn, origin, stamp, replace(meta, importance=importance, importance_note=reason)
    )


def set_scope(conn: Connection, origin: NodeId, stamp: Stamp, row_id: str, scope: str) -> Meta:
    """Put a memory in ``scope`` (the caller checked its format); no write if it is there."""
    meta = meta_of(conn, _memory(conn, row_id))
    if meta.scope == scope:
        return meta
    return write_meta(conn, origin, stamp, replace(meta, scope=scope))


def promote_fact(
    conn: Connection, origin: NodeId, stamp: Stamp, row: Row, *, now_ms: int
) -> FactRow:
    """Make a session's fact the user's: remembered again (the path of ``remember``), then moved
    to the ``user`` scope and marked updated now, since promoting it confirms it.

    Raises:
        InvalidInput: ``row`` is not a fact.
    """
    if row.get("table", FACTS.name) != FACTS.name or "predicate" not in row:
        raise InvalidInput(f"{row['id']!r} is not a fact; only facts are promoted")
    triple = (str(row["subject"]), str(row["predicate"]), str(row["object"]))
    fact = remember_fact(conn, origin, stamp, triple, now_ms=now_ms)
    meta = meta_of(conn, cast(Row, fact))
    write_meta(conn, origin, stamp, replace(meta, scope=DEFAULT_SCOPE, updated_at=now_ms))
    return fact


def remember_scoped(
    conn: Connection,
    origin: NodeId,
    stamp: Stamp,
    triple: tuple[str, str, str],
    *,
    now_ms: int,
    confidence: float = 1.0,
    scope: str | None = None,
) -> FactRow:
    """:func:`~feral.storage.memory.memories.remember_fact`, then the fact put in ``scope`` in the
    same transaction (``None`` leaves the scope it has: the user's for a new fact)."""
    fact = remember_fact(conn, origin, stamp, triple, now_ms=now_ms, confidence=confidence)
    if scope is not None:
        set_scope(conn, origin, stamp, str(fact["id"]), scope)
    return fact


def nuke_scope(conn: Connection, origin: NodeId, stamp: Stamp, scope: str) -> list[str]:
    """Hard-delete every fact and episode of ``scope`` (archived ones too), as ``nuke`` does
    one: the content is erased here and tombstones replicate. Returns the ids, oldest first."""
    ids = [
        str(record[0])
        for table in (EPISODES, FACTS)
        for record in conn.execute(
            f"SELECT t.id, t.created_at FROM {table.name} t JOIN memory_meta m ON m.id = t.id "
            "WHERE t.deleted = 0 AND m.deleted = 0 AND m.scope = ? ORDER BY t.created_at, t.id",
            (scope,),
        )
    ]
    for row_id in ids:
        nuke(conn, origin, stamp, row_id)
    return ids
