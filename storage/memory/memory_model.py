"""Local writes to the tables that describe and link memories: meta rows, edges and entities.

Each write goes through :func:`~feral.storage.memory.memories.commit_local` like the tiers, so these
rows replicate, merge last-write-wins and appear in exports. A memory without a meta row has
:data:`DEFAULT_META`; edges and entities have ids derived from their content (sync/ids.py), so the
same link or entity made on two devices is one row.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from feral.storage.db.connection import Connection
from feral.sync.ids import edge_id, entity_id
from feral.sync.schema import EDGES, ENTITIES, MEMORY_META
from feral.sync.types import NodeId, RowId

from .memories import Row, Stamp, commit_local, row_dict, select_sql, writable_id

__all__ = [
    "CATEGORIES",
    "DEFAULT_SCOPE",
    "EDGE_TYPES",
    "Meta",
    "add_edge",
    "add_entity",
    "edges_of",
    "read_meta",
    "write_meta",
]

CATEGORIES = (
    "identity",
    "preference",
    "interest",
    "goal",
    "context",
    "directive",
    "event",
    "note",
)
"""What a fact is about; ``identity`` facts never decay in ranking."""

EDGE_TYPES = ("supersedes", "contradicts", "related_to", "co_extracted", "consolidated")
"""The kinds of link between memories. ``A supersedes B``: A is the newer value, B archived."""

DEFAULT_SCOPE = "user"


@dataclass(frozen=True)
class Meta:
    """A memory's category, scope and importance, and when its content was last confirmed."""

    memory_id: str
    category: str = "note"
    scope: str = DEFAULT_SCOPE
    importance: float = 1.0
    importance_note: str = ""
    updated_at: int = 0


def read_meta(conn: Connection, memory_id: str, *, created_at: int = 0) -> Meta:
    """The meta row of a memory, or the defaults (updated when it was created) if it has none."""
    record = conn.execute(
        f"{select_sql(MEMORY_META)} WHERE id = ? AND deleted = 0", (memory_id,)
    ).fetchone()
    if record is None:
        return Meta(memory_id, updated_at=created_at)
    row = row_dict(MEMORY_META, record)
    return Meta(
        memory_id,
        category=row["category"],
        scope=row["scope"],
        importance=row["importance"],
        importance_note=row["importance_note"],
        updated_at=row["updated_at"],
    )


def write_meta(conn: Connection, origin: NodeId, stamp: Stamp, meta: Meta) -> Meta:
    """Write a memory's meta row (a no-op when it already holds exactly these values)."""
    if meta.category not in CATEGORIES:
        raise ValueError(f"unknown category {meta.category!r}; one of {', '.join(CATEGORIES)}")
    current = conn.execute(
        f"{select_sql(MEMORY_META)} WHERE id = ? AND deleted = 0", (meta.memory_id,)
    ).fetchone()
    values = (
        meta.memory_id,
        meta.category,
        meta.scope,
        float(meta.importance),
        meta.importance_note,
        meta.updated_at,
    )
    if current is not None and tuple(current[: len(values)]) == values:
        return meta
    commit_local(conn, origin, stamp, [(MEMORY_META, RowId(meta.memory_id), values)])
    return replace(meta, importance=float(meta.importance))


def add_edge(
    conn: Connection,
    origin: NodeId,
    stamp: Stamp,
    edge_type: str,
    from_id: str,
    to_id: str,
    *,
    now_ms: int,
    note: str = "",
) -> Row:
    """Link two memories; linking them again with the same type writes nothing new."""
    if edge_type not in EDGE_TYPES:
        raise ValueError(f"unknown edge type {edge_type!r}; one of {', '.join(EDGE_TYPES)}")
    row_id = writable_id(conn, EDGES, edge_id(edge_type, from_id, to_id))
    existing = _live(conn, row_id)
    if existing is not None and existing["note"] == note:
        return existing
    created = existing["created_at"] if existing is not None else now_ms
    values = (row_id, from_id, to_id, edge_type, note, created, False)
    commit_local(conn, origin, stamp, [(EDGES, row_id, values)])
    edge = _live(conn, row_id)
    assert edge is not None
    return edge


def _live(conn: Connection, row_id: str) -> Row | None:
    record = conn.execute(
        f"{select_sql(EDGES)} WHERE id = ? AND deleted = 0 AND archived = 0", (row_id,)
    ).fetchone()
    return row_dict(EDGES, record) if record is not None else None


def edges_of(conn: Connection, memory_id: str) -> list[Row]:
    """Live edges that start or end at a memory, oldest first (then by id, the same everywhere)."""
    records = conn.execute(
        f"{select_sql(EDGES)} WHERE (from_id = ? OR to_id = ?) AND deleted = 0 AND archived = 0 "
        "ORDER BY created_at, id",
        (memory_id, memory_id),
    ).fetchall()
    return [row_dict(EDGES, r) for r in records]


def add_entity(
    conn: Connection, origin: NodeId, stamp: Stamp, entity_type: str, name: str, *, now_ms: int
) -> Row:
    """Name an entity; the same type and normalised name is always one row."""
    row_id = writable_id(conn, ENTITIES, entity_id(entity_type, name))
    record = conn.execute(f"{select_sql(ENTITIES)} WHERE id = ?", (row_id,)).fetchone()
    if record is not None:
        row = row_dict(ENTITIES, record)
        if not row["deleted"] and not row["archived"]:
            return row
    values = (row_id, name.strip(), entity_type.strip().lower(), now_ms, False)
    commit_local(conn, origin, stamp, [(ENTITIES, row_id, values)])
    record = conn.execute(f"{select_sql(ENTITIES)} WHERE id = ?", (row_id,)).fetchone()
    return row_dict(ENTITIES, record)
