"""Erasing a hard-deleted row's words from the delta log and the files (issue 11, #8).

A tombstone keeps only the row's id and clocks, but the log keeps every entry it received, and a
nuked row's earlier entries carried its content in full. Those entries keep their place (origin,
stamp, table and row id), so each origin's log stays gap-free and entry counts still balance;
only their payloads go. A peer that asks for them later receives tombstones at the old stamps:
each loses to the newer tombstone it also receives (or to whatever newer write it holds), so
every node converges to the same row, and no node ever sends the words on again.

The rule kept, for every row: once its log holds an entry without payload (a tombstone, or an
entry a tombstone erased), none of its entries has a payload, whatever their stamps. A tombstone
wins over every write of its row (sync/merge.py): a device that had not heard of a nuke may
write the row later, an archive say, and its write arrives as a tombstone at its own stamp, so
neither the row nor its words come back, and a tombstone that arrives after a newer write of
its row makes that row a tombstone at the newer write's version (:func:`tombstones_overtaken`),
as every other device ends. Both sides of a link apply it through :func:`erase_outdated`,
called by every write (local or remote), so a node that receives a remote tombstone erases
exactly as the node that nuked, and a later peer never receives the words. The log's entries
without payload have a partial index by row (migration ``0010_log_tombstones``), which writes
with a payload never touch; storage/log/integrity.py uses it to tell an erased copy from a forged
one.

The rest of the erasure is SQLite's: ``secure_delete`` zeroes freed cells and pages
(storage/db/connection.py), the full-text indexes remove a deleted row's terms at once (migration
``0007_erase_on_nuke``), and :func:`checkpoint_wal` empties the WAL, which still holds the pages
as they were before the nuke.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from feral.storage.db.connection import Connection
from feral.storage.vectors.vectors import drop_vectors
from feral.sync.delta import Delta
from feral.sync.schema import table_by_name
from feral.sync.types import NodeId, RowId

__all__ = ["checkpoint_wal", "erase_outdated", "finish_erasing", "tombstones_overtaken"]

_Key = tuple[str, str]
"""A row: its table's name and its id."""
_Row = tuple[int, str]
"""A row as the log names it: its table's code and its id."""
_Version = tuple[int, str]
"""A write's place in the merge order: ``(hlc, origin)``."""

_BLANK_ALL = """
UPDATE delta_log SET payload = NULL
WHERE payload IS NOT NULL AND row_id IN (SELECT value ->> 1 FROM json_each(?1))
  AND EXISTS (SELECT 1 FROM json_each(?1)
              WHERE value ->> 0 = delta_log.tbl AND value ->> 1 = delta_log.row_id)
"""
"""One scan of the log; the ids' ``IN`` list is built once, the table checked per match."""

_WITHDRAW_ALARMS = """
DELETE FROM integrity_alarms
WHERE row_id IN (SELECT value ->> 1 FROM json_each(?1))
  AND EXISTS (SELECT 1 FROM json_each(?1)
              WHERE value ->> 0 = integrity_alarms.tbl
                AND value ->> 1 = integrity_alarms.row_id)
"""
"""Integrity alarms (storage/log/integrity.py) on entries of a row a tombstone erased. A peer that
nuked first may send such an entry erased before its tombstone arrives (pages go origin by
origin), which looks like a forged tombstone until the real one comes; once it has come, the
erased copy is explained, whether or not the row was written again meanwhile."""


def erase_outdated(conn: Connection, deltas: Sequence[Delta]) -> Sequence[Delta]:
    """``deltas`` with each live write of a row that has an erased entry (a tombstone, or an
    entry a tombstone erased), in its log or in the batch, turned into a tombstone at its own
    stamp: a tombstone wins over every write of its row (sync/merge.py).

    A tombstone of the batch newer than any its row's log holds also drops the payloads of every
    logged entry of the row (and any integrity alarm on them) and the row's vectors. The
    log's erased entries are found by their partial index (migration ``0010_log_tombstones``),
    which writes with a payload never touch. Must run inside the batch's write transaction,
    before it is applied.
    """
    batch = _batch_marks([delta for delta in deltas if delta.values is None])
    codes = {table_by_name(table).code for table in {delta.table for delta in deltas}}
    logged = {code for code in codes if _logs_erased(conn, code)}
    dead = _dead_rows(conn, deltas)  # tombstones whose log entries a prune removed
    if not batch and not logged and not dead:
        return deltas  # the common case: nothing erased in the batch, its rows or its logs
    held = {**dict.fromkeys(dead, _NONE), **_logged_marks(conn, deltas, logged)}
    raised = {key: version for key, version in batch.items() if version > held.get(key, _NONE)}
    if raised:
        _erase_below(conn, deltas, raised)
    marks = {**held, **raised}
    return [_outdated(d, marks) for d in deltas] if marks else deltas


def tombstones_overtaken(conn: Connection, deltas: Sequence[Delta]) -> list[Delta]:
    """For each row a tombstone of ``deltas`` reaches while it is live here at a newer version,
    a tombstone at that version: the row it leaves (sync/merge.py, ``merge_row``). They are
    rows, not writes, so the caller merges them without logging them. ``deltas`` are the batch
    as :func:`erase_outdated` left it."""
    dead: dict[str, set[str]] = {}
    for delta in deltas:
        if delta.values is None:
            dead.setdefault(delta.table, set()).add(delta.row_id)
    overtaken: list[Delta] = []
    for table, ids in dead.items():
        for (_, row_id), ((hlc, origin), deleted) in _states(
            conn, table, ids, f'SELECT * FROM "{table}"'
        ).items():
            if not deleted:
                overtaken.append(Delta(table, RowId(row_id), hlc, NodeId(origin), None))
    return overtaken


_NONE: _Version = (0, "")
"""Older than every stamp."""


def _dead_rows(conn: Connection, deltas: Sequence[Delta]) -> set[_Row]:
    """The rows the batch writes live that are tombstones here (one key probe per row)."""
    dead: set[_Row] = set()
    for table in {delta.table for delta in deltas if delta.values is not None}:
        ids = json.dumps(sorted({d.row_id for d in deltas if d.table == table and d.values}))
        code = table_by_name(table).code
        rows = conn.execute(
            f'SELECT t.id FROM json_each(?) AS j CROSS JOIN "{table}" AS t ON t.id = j.value '
            "WHERE t.deleted = 1",
            (ids,),
        )
        dead.update((code, str(row_id)) for (row_id,) in rows)
    return dead


def _batch_marks(tombstones: Sequence[Delta]) -> dict[_Row, _Version]:
    """The newest of each row's entries among ``tombstones`` (entries without payload)."""
    marks: dict[_Row, _Version] = {}
    for delta in tombstones:
        key = (table_by_name(delta.table).code, delta.row_id)
        marks[key] = max(marks.get(key, _NONE), (delta.hlc, delta.origin))
    return marks


LOGS_ERASED = (
    "SELECT 1 FROM delta_log INDEXED BY delta_log_tombstones WHERE tbl = ? AND payload IS NULL "
    "LIMIT 1"
)
"""Whether the log holds an entry without payload of a table. Left to choose, the planner reads
it through ``delta_log_rows`` (every entry of the table) rather than the partial index."""


def _logs_erased(conn: Connection, code: int) -> bool:
    """Whether the log holds any entry without payload of the table (one index probe)."""
    return conn.execute(LOGS_ERASED, (code,)).fetchone() is not None


def _logged_marks(
    conn: Connection, deltas: Sequence[Delta], codes: set[int]
) -> dict[_Row, _Version]:
    """The newest logged entry without payload of each row the batch writes, in ``codes``:
    one probe of the partial index per row, a table at a time."""
    ids: dict[int, set[str]] = {code: set() for code in codes}
    for delta in deltas:
        code = table_by_name(delta.table).code
        if code in ids:
            ids[code].add(delta.row_id)
    marks: dict[_Row, _Version] = {}
    for code, rows in ids.items():
        for row_id, hlc, origin in conn.execute(_LOGGED_MARKS, (json.dumps(sorted(rows)), code)):
            key = (code, str(row_id))
            marks[key] = max(marks.get(key, _NONE), (int(hlc), str(origin)))
    return marks


_LOGGED_MARKS = """
SELECT l.row_id, l.hlc, l.origin FROM json_each(?1) AS j
CROSS JOIN delta_log AS l ON l.tbl = ?2 AND l.row_id = j.value
WHERE l.payload IS NULL
"""


def _erase_below(conn: Connection, deltas: Sequence[Delta], raised: dict[_Row, _Version]) -> None:
    """Drop the words of every logged entry of the rows the batch nukes, and the alarms on them;
    drop those rows' vectors.

    A row this node holds no entry of has nothing to erase; for the others, one scan of the log
    for the batch, as entries with a payload have no index by row (it would cost every write).
    """
    names = {table_by_name(delta.table).code: delta.table for delta in deltas}
    current: dict[_Row, tuple[_Version, bool]] = {}
    for code, name in names.items():
        ids = {row_id for c, row_id in raised if c == code}
        if ids:
            states = _states(conn, name, ids, f'SELECT * FROM "{name}"')
            current.update({(code, row_id): state for (_, row_id), state in states.items()})
    held = {key: version for key, version in raised.items() if key in current}
    if not held:
        return
    marks = json.dumps([[*key, *version] for key, version in held.items()])
    conn.execute(_BLANK_ALL, (marks,))
    conn.execute(_WITHDRAW_ALARMS, (marks,))
    _note_erased(conn, list(held))
    for code, row_id in held:  # the row dies in the batch
        drop_vectors(conn, names[code], [row_id])


def _outdated(delta: Delta, marks: dict[_Row, _Version]) -> Delta:
    if delta.values is None or (table_by_name(delta.table).code, delta.row_id) not in marks:
        return delta
    return Delta(delta.table, delta.row_id, delta.hlc, delta.origin, None, delta.prior)


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
