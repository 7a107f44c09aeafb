"""Local writes to the replicated tiers: remember, record, archive, restore, hard delete; and
the reads of a tier's rows as users see them.

Every function here runs inside a write transaction and goes through
:func:`~feral.storage.memory.local_commit.commit_local`, which stamps each change with the
caller's clock (the node's, the only place HLCs are made), merges it into its row and appends it
to the delta log in the same transaction (DESIGN §4). ``Stamp``, ``Change`` and ``commit_local``
are imported from here too, as the tiers' writes name them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from typing import Any, cast

from feral.storage.db.connection import Connection
from feral.storage.db.rows import EpisodeRow, ExecutionRow, FactRow
from feral.sync.errors import NotFoundError
from feral.sync.ids import fact_id, reborn_id
from feral.sync.schema import (
    CONFLICTS,
    EDGES,
    EPISODES,
    EXEC_LOG,
    FACTS,
    MEMORY_META,
    Table,
    Value,
)
from feral.sync.types import NodeId, RowId

from .local_commit import (
    Change,
    Stamp,
    commit_local,
    stamp_changes,
    stored_versions_high_water,
    with_priors,
)

__all__ = [
    "TIER_OF",
    "Change",
    "Row",
    "Stamp",
    "add_episode",
    "commit_local",
    "find_row",
    "import_facts",
    "list_episodes",
    "list_live",
    "log_execution",
    "nuke",
    "row_dict",
    "select_sql",
    "stamp_changes",
    "with_priors",
    "stored_versions_high_water",
    "remember_fact",
    "set_archived",
]

Row = dict[str, Any]

TIERS: tuple[Table, ...] = (EPISODES, FACTS, EXEC_LOG)
"""The memory tiers a user's ids name; the other replicated tables describe or link them."""
TIER_OF = {EPISODES.name: "episodic", FACTS.name: "semantic", EXEC_LOG.name: "execution"}


def row_dict(table: Table, record: Sequence[Any]) -> Row:
    """A row as users see it: its columns, its tier and its clock fields."""
    names = (*table.column_names, "hlc", "origin", "deleted")
    row: Row = dict(zip(names, record, strict=True))
    for column in table.columns:
        if column.kind == "bool":
            row[column.name] = bool(row[column.name])
    row["deleted"] = bool(row["deleted"])
    if table.name in TIER_OF:
        row["tier"] = TIER_OF[table.name]
    return row


@cache
def select_sql(table: Table) -> str:
    """``SELECT`` of a table's replicated columns and clock fields, in that order (the columns
    of ``table`` as given: this release's, or a wider schema's)."""
    cols = ", ".join(f'"{n}"' for n in (*table.column_names, "hlc", "origin", "deleted"))
    return f'SELECT {cols} FROM "{table.name}"'


def find_row(conn: Connection, row_id: str, *, live_only: bool = True) -> tuple[Table, Row]:
    """Look an id up in every tier.

    Raises:
        NotFoundError: no row has this id (or it was hard-deleted, when ``live_only``).
    """
    for table in TIERS:
        record = conn.execute(f"{select_sql(table)} WHERE id = ?", (row_id,)).fetchone()
        if record is not None:
            row = row_dict(table, record)
            if live_only and row["deleted"]:
                break
            return table, row
    raise NotFoundError(f"no memory with id {row_id!r}")


def _values(table: Table, row: Row) -> tuple[Value, ...]:
    return tuple(row[name] for name in table.column_names)


def remember_fact(
    conn: Connection,
    origin: NodeId,
    stamp: Stamp,
    triple: tuple[str, str, str],
    *,
    now_ms: int,
    confidence: float = 1.0,
    source_episode: str | None = None,
) -> FactRow:
    """Store a knowledge-graph triple; the same triple (after normalisation) is always one row.

    Remembering a live fact again writes nothing; remembering an archived one brings it back
    with a new write, and a nuked one is written as a new row (:func:`writable_fact_id`).
    """
    subject, predicate, obj = (part.strip() for part in triple)
    row_id = writable_fact_id(conn, fact_id(subject, predicate, obj))
    existing = _existing(conn, FACTS, row_id)
    if existing and not existing["archived"] and not existing["deleted"]:
        return cast(FactRow, existing)
    created = existing["created_at"] if existing and not existing["deleted"] else now_ms
    values = (row_id, subject, predicate, obj, confidence, source_episode, created, False)
    commit_local(conn, origin, stamp, [(FACTS, row_id, values)])
    return cast(FactRow, find_row(conn, row_id)[1])


def writable_id(conn: Connection, table: Table, row_id: RowId) -> RowId:
    """The id a row whose content derives ``row_id`` (a fact, an edge, an entity) lives under
    here: ``row_id`` itself unless a nuke left a tombstone there, which no write can bring back
    (sync/merge.py); then the id it is reborn under (sync/ids.py), and so on after each nuke."""
    query = f'SELECT deleted FROM "{table.name}" WHERE id = ?'
    while (dead := conn.execute(query, (row_id,)).fetchone()) and dead[0]:
        row_id = reborn_id(row_id)
    return row_id


def writable_fact_id(conn: Connection, row_id: RowId) -> RowId:
    """:func:`writable_id` for a fact."""
    return writable_id(conn, FACTS, row_id)


def _state(row: Row | None, now_ms: int) -> tuple[bool, bool, int]:
    """``(archived, deleted, created_at)`` of a fact row, as a missing one is written."""
    if row is None:
        return True, False, now_ms
    return bool(row["archived"]), bool(row["deleted"]), int(cast(int, row["created_at"]))


def _existing(conn: Connection, table: Table, row_id: RowId) -> Row | None:
    record = conn.execute(f"{select_sql(table)} WHERE id = ?", (row_id,)).fetchone()
    return row_dict(table, record) if record else None


def add_episode(
    conn: Connection,
    origin: NodeId,
    stamp: Stamp,
    row_id: RowId,
    *,
    session_id: str,
    summary: str,
    entities: Sequence[str],
    now_ms: int,
) -> EpisodeRow:
    """Store an episode (a summary of part of a session) under a fresh, collision-free id."""
    values = (row_id, session_id, summary, json.dumps(list(entities)), now_ms, False)
    commit_local(conn, origin, stamp, [(EPISODES, row_id, values)])
    return cast(EpisodeRow, find_row(conn, row_id)[1])


def log_execution(
    conn: Connection,
    origin: NodeId,
    stamp: Stamp,
    row_id: RowId,
    *,
    session_id: str,
    tool: str,
    args: object,
    result: object,
    latency_ms: int,
    success: bool,
    now_ms: int,
) -> ExecutionRow:
    """Append a tool call to the execution log (insert-only: nothing here edits an entry)."""
    values = (
        row_id,
        session_id,
        tool,
        json.dumps(args, sort_keys=True),
        json.dumps(result, sort_keys=True),
        latency_ms,
        success,
        now_ms,
    )
    commit_local(conn, origin, stamp, [(EXEC_LOG, row_id, values)])
    return cast(ExecutionRow, find_row(conn, row_id)[1])


def set_archived(
    conn: Connection, origin: NodeId, stamp: Stamp, row_id: str, archived: bool
) -> Row:
    """Archive (soft-delete) or restore a memory; the change replicates like any write.

    Raises:
        NotFoundError: unknown id, a hard-deleted row, or an execution-log entry (insert-only).
    """
    table, row = find_row(conn, row_id)
    if not table.has_archive:
        raise NotFoundError(f"{row_id!r} is an execution-log entry, which cannot be archived")
    if row["archived"] == archived:
        return row
    row["archived"] = archived
    commit_local(conn, origin, stamp, [(table, RowId(row_id), _values(table, row))])
    return find_row(conn, row_id)[1]


def nuke(conn: Connection, origin: NodeId, stamp: Stamp, row_id: str) -> Row:
    """Hard-delete a memory: its content is erased here and a tombstone replicates everywhere.

    Its meta row and every edge that starts or ends at it go too: a boost's reason and an
    edge's note are words about the memory, and a nuke leaves none of them behind.

    Raises:
        NotFoundError: unknown or already deleted id.
    """
    table, _ = find_row(conn, row_id)
    changes: list[Change] = [(table, RowId(row_id), None)]
    changes += [(table_, RowId(rid), None) for table_, rid in _described_by(conn, row_id)]
    commit_local(conn, origin, stamp, changes)
    return find_row(conn, row_id, live_only=False)[1]


def _described_by(conn: Connection, row_id: str) -> list[tuple[Table, str]]:
    """The live rows that describe or link a memory: its meta row, its edges, its conflicts."""
    meta = conn.execute(
        "SELECT id FROM memory_meta WHERE id = ? AND deleted = 0", (row_id,)
    ).fetchall()
    edges = conn.execute(
        "SELECT id FROM edges WHERE (from_id = ?1 OR to_id = ?1) AND deleted = 0 ORDER BY id",
        (row_id,),
    ).fetchall()
    conflicts = (
        conn.execute(  # a conflict record holds the row's words (storage/absorb/conflicts.py)
            "SELECT id FROM conflicts WHERE row_id = ? AND deleted = 0 ORDER BY id", (row_id,)
        ).fetchall()
    )
    return (
        [(MEMORY_META, r[0]) for r in meta]
        + [(EDGES, r[0]) for r in edges]
        + [(CONFLICTS, r[0]) for r in conflicts]
    )


def list_episodes(
    conn: Connection, limit: int, *, include_archived: bool = False
) -> list[EpisodeRow]:
    """The newest episodes first."""
    where = "deleted = 0" + ("" if include_archived else " AND archived = 0")
    records = conn.execute(
        f"{select_sql(EPISODES)} WHERE {where} ORDER BY created_at DESC, id DESC LIMIT ?", (limit,)
    ).fetchall()
    return [cast(EpisodeRow, row_dict(EPISODES, r)) for r in records]


def list_live(conn: Connection, table: Table) -> list[Row]:
    """Every live row of ``table`` (neither archived nor hard-deleted), in id order."""
    where = "deleted = 0" + (" AND archived = 0" if table.has_archive else "")
    records = conn.execute(f"{select_sql(table)} WHERE {where} ORDER BY id").fetchall()
    return [row_dict(table, r) for r in records]


def import_facts(
    conn: Connection,
    origin: NodeId,
    stamp: Stamp,
    triples: Sequence[tuple[str, str, str]],
    *,
    now_ms: int,
) -> int:
    """Remember many facts in one transaction (the caller sizes the batch); returns how many
    rows were written. Facts already live here, or repeated within the batch, are skipped."""
    batch: dict[RowId, tuple[str, str, str]] = {}
    for subject, predicate, obj in triples:
        subject, predicate, obj = subject.strip(), predicate.strip(), obj.strip()
        batch.setdefault(fact_id(subject, predicate, obj), (subject, predicate, obj))
    existing = {
        row_id: (archived, deleted, created)
        for row_id, archived, deleted, created in conn.execute(
            # Probe the key once per id, in the batch's order (CROSS JOIN fixes that order);
            # ``id IN (...)`` would first build a sorted copy of the ids. The ids are distinct
            # (dict keys), so both find the same rows.
            "SELECT f.id, f.archived, f.deleted, f.created_at "
            "FROM json_each(?) AS j CROSS JOIN facts AS f ON f.id = j.value",
            (json.dumps(list(batch)),),
        )
    }
    changes: list[Change] = []
    for base_id, (subject, predicate, obj) in batch.items():
        archived, deleted, created = existing.get(base_id, (True, False, now_ms))
        row_id = base_id
        if deleted:  # nuked: a row of its own (rare, so looked up one by one)
            row_id = writable_fact_id(conn, base_id)
            archived, deleted, created = _state(_existing(conn, FACTS, row_id), now_ms)
        if not archived and not deleted:
            continue
        values = (row_id, subject, predicate, obj, 1.0, None, now_ms if deleted else created, False)
        changes.append((FACTS, row_id, values))
    if changes:
        commit_local(conn, origin, stamp, changes)
    return len(changes)
