"""Erasing a hard-deleted row's words from the delta log and the files (issue 11, #8).

A tombstone keeps only the row's id and clocks, but the log keeps every entry it received, and a
nuked row's earlier entries carried its content in full. Those entries keep their place (origin,
stamp, table and row id), so each origin's log stays gap-free and entry counts still balance;
only their payloads go. A peer that asks for them later receives tombstones at the old stamps:
each loses to the newer tombstone it also receives (or to whatever newer write it holds), so
every node converges to the same row, and no node ever sends the words on again.

The rule kept, for every row whose current state is a tombstone stamped ``T``: each log entry of
that row older than ``T`` (by ``(hlc, origin)``, the merge order) has no payload. A write that
arrives already outdated by a tombstone is stored as a tombstone at its own stamp. Both sides of
a link apply it through :func:`erase_outdated`, called by every write (local or remote), so a
node that receives a remote tombstone erases exactly as the node that nuked. Not yet covered:
a tombstone that arrives after a newer write of its row (made by a device that had not heard of
the nuke), or a write older than a tombstone that arrives once the row was written again: the
older entries keep their words there (only the log would show the tombstone, and it has no
index by row); storage/integrity.py takes neither copy of such an entry for a forgery.

The rest of the erasure is SQLite's: ``secure_delete`` zeroes freed cells and pages
(storage/connection.py), the full-text indexes remove a deleted row's terms at once (migration
``0007_erase_on_nuke``), and :func:`checkpoint_wal` empties the WAL, which still holds the pages
as they were before the nuke.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence

from feral.sync.delta import Delta
from feral.sync.schema import table_by_name

from .connection import Connection
from .vectors import drop_vectors

__all__ = ["checkpoint_wal", "erase_outdated", "finish_erasing"]

_Key = tuple[str, str]
"""A row: its table's name and its id."""
_Version = tuple[int, str]
"""A write's place in the merge order: ``(hlc, origin)``."""

_BLANK_EARLIER = """
UPDATE delta_log SET payload = NULL
WHERE payload IS NOT NULL AND row_id IN (SELECT value ->> 1 FROM json_each(?1))
  AND (hlc, origin) < (SELECT value ->> 2, value ->> 3 FROM json_each(?1)
                       WHERE value ->> 0 = delta_log.tbl AND value ->> 1 = delta_log.row_id)
"""
"""One scan of the log; the ids' ``IN`` list is built once, the stamps are looked up per match."""

_WITHDRAW_ALARMS = """
DELETE FROM integrity_alarms
WHERE row_id IN (SELECT value ->> 1 FROM json_each(?1))
  AND (hlc, origin) < (SELECT value ->> 2, value ->> 3 FROM json_each(?1)
                       WHERE value ->> 0 = integrity_alarms.tbl
                         AND value ->> 1 = integrity_alarms.row_id)
"""
"""Integrity alarms (storage/integrity.py) on entries a tombstone outdates. A peer that nuked
first may send such an entry erased before its tombstone arrives (pages go origin by origin),
which looks like a forged tombstone until the real one comes; once it has come, the erased copy
is explained, whether or not the row was written again meanwhile (a tombstone that arrives
after a newer write of its row still proves it)."""


def erase_outdated(conn: Connection, deltas: Sequence[Delta]) -> Sequence[Delta]:
    """``deltas`` with each write a tombstone outdates turned into a tombstone at its own stamp.

    Also drops the payloads of the logged entries (and the vectors, and any integrity alarm on
    those entries) of every row this batch newly turns into a tombstone: one scan of the log
    for the batch, since a nuke is rare and an index of the log by row would cost every write.
    Must run inside the batch's write transaction, before it is applied.
    """
    kinds = {(delta.table, delta.values is None) for delta in deltas}
    if not any(nuking for _, nuking in kinds) and not any(
        _has_tombstones(conn, table) for table in {table for table, _ in kinds}
    ):
        return deltas  # the common case: no tombstone in the batch or in its tables
    _withdraw_alarms(conn, deltas)
    current = _current_states(conn, deltas)
    newest = _newest(deltas, current)
    dead = {key: version for key, (version, tombstone) in newest.items() if tombstone}
    erased = [
        key for key, version in dead.items() if current.get(key, (version, True)) != (version, True)
    ]
    if erased:
        rows = [(table_by_name(table).code, row_id) for table, row_id in erased]
        blank = [[*row, *dead[key]] for row, key in zip(rows, erased, strict=True)]
        conn.execute(_BLANK_EARLIER, (json.dumps(blank),))
        _note_erased(conn, rows)
        for table, row_id in erased:
            drop_vectors(conn, table, [row_id])
    return [_outdated(d, dead) for d in deltas] if dead else deltas


def _withdraw_alarms(conn: Connection, deltas: Sequence[Delta]) -> None:
    """Withdraw the integrity alarms each tombstone (or erased entry) of the batch explains.

    An alarm between an erased copy and one with words is withdrawn once the log holds an
    erased entry of the row above it, whatever the row's state: a tombstone outdated by a later
    write (made by a device that had not heard of the nuke) proves the copy erased all the same.
    """
    newest: dict[tuple[int, str], _Version] = {}
    for delta in deltas:
        if delta.values is None:
            key = (table_by_name(delta.table).code, delta.row_id)
            newest[key] = max(newest.get(key, (0, "")), (delta.hlc, delta.origin))
    if newest:
        marks = [[*key, *version] for key, version in newest.items()]
        conn.execute(_WITHDRAW_ALARMS, (json.dumps(marks),))


def _outdated(delta: Delta, dead: dict[_Key, _Version]) -> Delta:
    version = dead.get((delta.table, delta.row_id))
    if delta.values is None or version is None or (delta.hlc, delta.origin) >= version:
        return delta
    return Delta(delta.table, delta.row_id, delta.hlc, delta.origin, None)


def _newest(
    deltas: Sequence[Delta], current: dict[_Key, tuple[_Version, bool]]
) -> dict[_Key, tuple[_Version, bool]]:
    """For each row that is or may become a tombstone, its newest version after the batch."""
    newest = dict(current)
    touched = newest.keys() | {(d.table, d.row_id) for d in deltas if d.values is None}
    for delta in deltas:
        key = (delta.table, delta.row_id)
        if key not in touched:
            continue  # a write to a row no tombstone touches
        version = (delta.hlc, delta.origin)
        held = newest.get(key)
        if held is None or version > held[0]:
            newest[key] = (version, delta.values is None)
    return newest


def _current_states(conn: Connection, deltas: Sequence[Delta]) -> dict[_Key, tuple[_Version, bool]]:
    """The stored version of each row a batch tombstone names, and of each row written in the
    batch that is a tombstone now: ``{(table, id): ((hlc, origin), is_tombstone)}``."""
    named: dict[str, set[str]] = defaultdict(set)
    written: dict[str, set[str]] = defaultdict(set)
    for delta in deltas:
        (written if delta.values is not None else named)[delta.table].add(delta.row_id)
    states: dict[_Key, tuple[_Version, bool]] = {}
    for table in sorted(named.keys() | written.keys()):
        quoted = '"' + table + '"'  # a name from the schema registry (Delta.check)
        if named[table]:
            states.update(_states(conn, table, named[table], f"SELECT * FROM {quoted}"))
        if written[table] - named[table] and _has_tombstones(conn, table):
            query = f"SELECT * FROM {quoted} WHERE deleted = 1"
            states.update(_states(conn, table, written[table] - named[table], query))
    return states


def _has_tombstones(conn: Connection, table: str) -> bool:
    """Whether the table holds any tombstone (one probe of its partial index, migration 0007)."""
    query = f'SELECT 1 FROM "{table}" WHERE deleted = 1 LIMIT 1'
    return conn.execute(query).fetchone() is not None


def _states(
    conn: Connection, table: str, ids: set[str], rows: str
) -> dict[_Key, tuple[_Version, bool]]:
    records = conn.execute(
        f"SELECT t.id, t.hlc, t.origin, t.deleted FROM json_each(?) AS j "
        f"CROSS JOIN ({rows}) AS t ON t.id = j.value",
        (json.dumps(sorted(ids)),),
    )
    return {(table, i): ((h, o), bool(d)) for i, h, o, d in records}


def checkpoint_wal(conn: Connection) -> bool:
    """Copy the WAL into the database file and truncate it to nothing, outside a transaction.

    After a nuke the WAL still holds the pages as they were before it, words included, until
    they are checkpointed and overwritten. Returns ``False`` if a reader in another process kept
    part of the WAL in use past the busy timeout: those frames go at the next checkpoint.
    """
    busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    return int(busy) == 0


def _note_erased(conn: Connection, rows: list[tuple[int, str]]) -> None:
    """Remember, for :func:`finish_erasing`, the rows whose words this transaction erased.

    A TEMP table belongs to this connection alone and rolls back with the transaction, so a
    refused page leaves nothing to finish.
    """
    conn.execute(_ERASED_TABLE)
    conn.executemany("INSERT OR IGNORE INTO temp.erased(tbl, row_id) VALUES (?, ?)", rows)


_ERASED_TABLE = (
    "CREATE TEMP TABLE IF NOT EXISTS erased (tbl INTEGER NOT NULL, row_id TEXT NOT NULL, "
    "PRIMARY KEY (tbl, row_id)) STRICT, WITHOUT ROWID"
)


def finish_erasing(conn: Connection) -> list[str]:
    """After the commit of writes that erased rows: empty the WAL, and name those rows.

    Run outside a transaction, on the connection that wrote. Returns the ids erased since the
    last call (the caller recompiles what it derived from them, such as wiki pages); nothing
    when nothing was erased, so calling it after every write costs one small read.
    """
    conn.execute(_ERASED_TABLE)
    ids = [str(row_id) for (row_id,) in conn.execute("SELECT row_id FROM temp.erased")]
    if ids:
        conn.execute("DELETE FROM temp.erased")
        checkpoint_wal(conn)
    return ids
