"""Conflicts: find them in the log, keep them, list them, count them, resolve them.

**A conflict** is a choice last-write-wins made for the user between values that no device's
write had seen together. There are two kinds, listed, counted and resolved alike (``memory
conflicts``, ``sync status``, ``memory stats``, the wiki, ``resolve``):

- an **edit** conflict: concurrent writes of one row (sync/conflicts.py's fork rule), kept as a
  replicated record; it shows the final value of each side (each device's last edit made
  apart, not only its first), every one that last-write-wins set aside among them;
- a **slot** conflict: one subject's single-valued slot holding several live values, derived
  when read (storage/absorb/slot_conflicts.py).

A record is a row of the replicated ``conflicts`` table, written by :func:`record_queued` as an
ordinary local write (stamped, logged, sent on), so every device shows the same list. Its id is
derived from the table, the row and the two versions, so two devices that find the same pair
write one row; what they write is derived from the two log entries alone, so the row is the same
whoever's copy last-write-wins keeps. Resolving is a local write too: the kept version's row,
stamped above both, and the record marked resolved, in one transaction.
"""

from __future__ import annotations

import json
from typing import Any, TypedDict

from feral.storage.db.connection import Connection
from feral.storage.log.delta_log import prior_from_columns
from feral.storage.log.fork_queue import queued_rows
from feral.storage.memory.memories import Change, Stamp, commit_local, row_dict, select_sql
from feral.sync.codec import decode_values
from feral.sync.conflicts import (
    CREATIONS_RACE,
    REPORTED_TABLES,
    Fork,
    LoggedWrite,
    branch_tips,
    conflict_id,
    forks,
    parse_version,
    version_text,
)
from feral.sync.delta import Version
from feral.sync.errors import NotFoundError
from feral.sync.schema import CONFLICTS, Value, table_by_code, table_by_name
from feral.sync.types import NodeId, RowId

from .slot_conflicts import SLOT_PREFIX, resolve_slot, slot_conflicts

__all__ = [
    "ConflictRow",
    "conflict_count",
    "list_conflicts",
    "record_queued",
    "resolve",
]


class ConflictRow(TypedDict):
    """A conflict as users see it: every value to choose between (its version and row), and
    how it was settled. ``kind`` is ``edit`` or ``slot``; ``parted`` holds an edit's first
    write on each side (the pair its id names), ``slot`` a slot's subject and name."""

    id: str
    kind: str
    table: str
    row_id: str
    slot: str
    prior: str
    parted: list[str]
    versions: list[str]
    values: list[dict[str, Value]]
    live: str
    detected_at: int
    resolved: bool
    kept: str
    resolved_at: int


def _row_writes(conn: Connection, code: int, row_id: str) -> list[LoggedWrite]:
    """Every log entry of one row, as the rule sees it."""
    writes = []
    for origin, hlc, payload, prior_hlc, prior_origin in conn.execute(
        "SELECT origin, hlc, payload, prior_hlc, prior_origin FROM delta_log "
        "WHERE tbl = ? AND row_id = ?",
        (code, row_id),
    ):
        values = None if payload is None else decode_values(payload)
        prior = prior_from_columns(prior_hlc, prior_origin)
        writes.append(LoggedWrite(Version(int(hlc), NodeId(origin)), prior, values))
    return writes


def _record_values(table: str, row_id: str, fork: Fork) -> tuple[Value, ...]:
    assert fork.a.values is not None and fork.b.values is not None  # forks() has payloads only
    return (
        conflict_id(table, row_id, fork.a.version, fork.b.version),
        table,
        row_id,
        version_text(fork.prior),
        version_text(fork.a.version),
        json.dumps(list(fork.a.values), ensure_ascii=False),
        version_text(fork.b.version),
        json.dumps(list(fork.b.values), ensure_ascii=False),
        max(fork.a.version.hlc, fork.b.version.hlc) >> 16,  # when the later side was written
        False,
        "",
        0,
    )


def record_queued(conn: Connection, origin: NodeId, stamp: Stamp) -> int:
    """Record every conflict of the queued rows that no record names yet; returns how many.

    A row now held as a tombstone records nothing (a nuke leaves no words behind), and a pair
    recorded before, resolved or deleted since, is never written again. ``detected_at`` comes
    from the stamps, not from the finder's clock, so every finder writes the same row.
    """
    changes: list[Change] = []
    for code, row_id in queued_rows(conn):
        table = table_by_code(code)
        deleted = conn.execute(
            f'SELECT deleted FROM "{table.name}" WHERE id = ?', (row_id,)
        ).fetchone()
        if deleted is not None and deleted[0]:  # (the queue holds reported tables only)
            changes += _records_of_nuked_row(conn, table.name, row_id)
            continue
        creations = table.name in CREATIONS_RACE
        for fork in forks(_row_writes(conn, code, row_id), creations=creations):
            values = _record_values(table.name, row_id, fork)
            known = conn.execute("SELECT 1 FROM conflicts WHERE id = ?", (values[0],))
            if known.fetchone() is None:
                changes.append((CONFLICTS, RowId(str(values[0])), values))
    conn.execute("DELETE FROM conflict_queue")
    if changes:
        commit_local(conn, origin, stamp, changes)
    return len(changes)


def _records_of_nuked_row(conn: Connection, table: str, row_id: str) -> list[Change]:
    """Tombstones for the live records of a row held as a tombstone: a record holds the row's
    words, and a nuke leaves none (a record found elsewhere before the nuke reached it too)."""
    ids = conn.execute(
        "SELECT id FROM conflicts WHERE tbl = ? AND row_id = ? AND deleted = 0 ORDER BY id",
        (table, row_id),
    ).fetchall()
    return [(CONFLICTS, RowId(r[0]), None) for r in ids]


def _side(writes: list[LoggedWrite], version: str, values: str) -> LoggedWrite:
    """One side of a record as the log holds it, else as the record keeps it."""
    parsed = parse_version(version)
    held = [w for w in writes if w.version == parsed]
    return held[0] if held else LoggedWrite(parsed, None, tuple(json.loads(values)))


def _choices(conn: Connection, row: dict[str, Any]) -> list[LoggedWrite]:
    """The values an edit record leaves to choose between: each side's final write."""
    table = table_by_name(row["tbl"])
    writes = _row_writes(conn, table.code, row["row_id"])
    prior = parse_version(row["prior"]) if row["prior"] else None
    a = _side(writes, row["version_a"], row["values_a"])
    b = _side(writes, row["version_b"], row["values_b"])
    return branch_tips(writes, Fork(prior, a, b))


def _shown(conn: Connection, row: dict[str, Any]) -> ConflictRow:
    table = table_by_name(row["tbl"])
    names = table.column_names
    live = conn.execute(
        f'SELECT hlc, origin FROM "{table.name}" WHERE id = ?', (row["row_id"],)
    ).fetchone()
    choices = _choices(conn, row)
    return ConflictRow(
        id=row["id"],
        kind="edit",
        table=table.name,
        row_id=row["row_id"],
        slot="",
        prior=row["prior"],
        parted=[row["version_a"], row["version_b"]],
        versions=[version_text(w.version) for w in choices],
        values=[dict(zip(names, w.values or (), strict=False)) for w in choices],
        live="" if live is None else version_text(Version(int(live[0]), NodeId(live[1]))),
        detected_at=row["detected_at"],
        resolved=row["resolved"],
        kept=row["kept"],
        resolved_at=row["resolved_at"],
    )


_REPORTED = ", ".join(f"'{name}'" for name in sorted(REPORTED_TABLES))
"""A record naming another table (sent by a peer, never written here) is not shown."""


def list_conflicts(conn: Connection, *, include_resolved: bool = False) -> list[ConflictRow]:
    """Every open conflict of both kinds (and the resolved records, if asked), oldest first,
    then by id: the same list in the same order on every device holding the same rows."""
    where = "deleted = 0" + ("" if include_resolved else " AND resolved = 0")
    records = conn.execute(
        f"{select_sql(CONFLICTS)} WHERE {where} AND tbl IN ({_REPORTED}) ORDER BY detected_at, id"
    ).fetchall()
    found = [_shown(conn, row_dict(CONFLICTS, r)) for r in records] + slot_conflicts(conn)
    return sorted(found, key=lambda c: (c["detected_at"], c["id"]))


def conflict_count(conn: Connection) -> int:
    """How many conflicts wait for a choice: the one count ``sync status``, ``memory stats``
    and ``memory conflicts`` show."""
    (records,) = conn.execute(
        f"SELECT count(*) FROM conflicts WHERE deleted = 0 AND resolved = 0 "
        f"AND tbl IN ({_REPORTED})"
    ).fetchone()
    return int(records) + len(slot_conflicts(conn))


def resolve(
    conn: Connection, origin: NodeId, stamp: Stamp, conflict: str, keep: str, *, now_ms: int
) -> ConflictRow:
    """Keep one value of an open conflict. An edit's: its row written again (stamped above
    every side, so it supersedes them everywhere) and the record marked resolved, in one local
    write; ``keep`` is one of the versions listed, or either first write. A slot's: see
    storage/absorb/slot_conflicts.py.

    Raises:
        NotFoundError: no open conflict has this id, or ``keep`` is not one of its versions.
    """
    if conflict.startswith(SLOT_PREFIX):
        return resolve_slot(conn, origin, stamp, conflict, keep, now_ms=now_ms)
    record = conn.execute(
        f"{select_sql(CONFLICTS)} WHERE id = ? AND deleted = 0", (conflict,)
    ).fetchone()
    if record is None:
        raise NotFoundError(f"no conflict with id {conflict!r}")
    row = row_dict(CONFLICTS, record)
    if row["resolved"]:
        raise NotFoundError(f"conflict {conflict!r} is already resolved (kept {row['kept']})")
    wanted = version_text(parse_version(keep))
    sides = {row["version_a"]: tuple(json.loads(row["values_a"])),
             row["version_b"]: tuple(json.loads(row["values_b"]))}  # fmt: skip
    sides.update({version_text(w.version): w.values for w in _choices(conn, row) if w.values})
    if wanted not in sides:
        raise NotFoundError(
            f"{keep!r} is not a version of conflict {conflict!r}: one of {', '.join(sides)}"
        )
    table = table_by_name(row["tbl"])
    kept_values = sides[wanted]
    settled = (*[row[name] for name in CONFLICTS.column_names[:9]], True, wanted, now_ms)
    commit_local(
        conn,
        origin,
        stamp,
        [(table, RowId(row["row_id"]), kept_values), (CONFLICTS, RowId(conflict), settled)],
    )
    return list_conflicts_by_id(conn, conflict)


def list_conflicts_by_id(conn: Connection, conflict: str) -> ConflictRow:
    """One record as :func:`list_conflicts` shows it."""
    record = conn.execute(f"{select_sql(CONFLICTS)} WHERE id = ?", (conflict,)).fetchone()
    if record is None:
        raise NotFoundError(f"no conflict with id {conflict!r}")
    return _shown(conn, row_dict(CONFLICTS, record))
