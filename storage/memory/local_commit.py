"""The one path of a local write: stamp each change, check it, merge it into its row, log it.

Every local write of storage/ (a remembered fact, an episode, an archive, a nuke, an import, the
memory model's rows) ends in :func:`commit_local`, inside the caller's write transaction. It is
apart from the tiers' writes (:mod:`feral.storage.memory.memories`) because it is the one place
that turns changes into deltas (the node's clock stamps them; DESIGN §4), with a fast path for
large batches held to the row-by-row definition by tests/storage/test_commit_paths.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from operator import attrgetter

from feral.storage.db.connection import Connection, schema_of
from feral.storage.db.opaque import carry_unknown
from feral.storage.log.delta_log import apply_deltas, own_high_water
from feral.sync.delta import Delta, Version, accepts_batch
from feral.sync.hlc import MAX_PACKED
from feral.sync.schema import BASE_SCHEMA, TABLES, Table, Value
from feral.sync.types import NodeId, RowId

__all__ = [
    "Change",
    "Stamp",
    "commit_local",
    "stamp_changes",
    "stored_versions_high_water",
    "with_priors",
]

Stamp = Callable[[int], int]
"""The node's clock: given the persisted high-water mark, return a new, strictly larger HLC."""

Change = tuple[Table, RowId, tuple[Value, ...] | None]
"""A local change before stamping: the table, the row id, the full new row (``None`` deletes)."""

_BATCH_CHECK_MIN = 8
"""Fewer changes than this are checked one by one: the batch test has a fixed cost that the
per-row saving repays from about five rows on."""
_name = attrgetter("name")

_REPLICATED = frozenset(table.name for table in TABLES)
"""The tables a change may name; a change naming another fails where it is checked."""


def commit_local(
    conn: Connection, origin: NodeId, stamp: Stamp, changes: Sequence[Change]
) -> list[Delta]:
    """Stamp, validate, merge and log local changes; the caller holds the write transaction.

    The floor is read inside the transaction, so a second process writing to the same home is
    serialised by SQLite's write lock and always stamps above this one. It is this node's own
    newest stamp and the stored versions of the rows written, never other rows' stamps: a
    received stamp does not lift the clock (sync/hlc.py), but a later edit of a row must still
    win over the version it edits, wherever that was stamped.
    """
    changes = carry_unknown(conn, changes)  # values of columns unknown here go on (opaque.py)
    floor = max(own_high_water(conn, origin), stored_versions_high_water(conn, changes))
    deltas = with_priors(conn, stamp_changes(origin, stamp, floor, changes))
    schema = schema_of(conn)
    if schema is not BASE_SCHEMA:  # checked by this release's columns: now the store's own
        for delta in deltas:
            delta.check(schema)
    apply_deltas(conn, deltas)
    return deltas


def with_priors(conn: Connection, deltas: Sequence[Delta]) -> list[Delta]:
    """Each delta with the version it replaces: the row's stored version (a tombstone's too),
    or the previous delta of the batch for the same row; none for a row's first write. This is
    what tells a later edit from a concurrent one (sync/conflicts.py). One lookup per table."""
    ids: dict[str, list[str]] = {}
    for delta in deltas:
        ids.setdefault(delta.table, []).append(delta.row_id)
    stored: dict[tuple[str, str], Version] = {}
    for name, row_ids in ids.items():
        for row_id, hlc, row_origin in conn.execute(
            f'SELECT id, hlc, origin FROM "{name}" WHERE id IN (SELECT value FROM json_each(?))',
            (json.dumps(row_ids),),
        ):
            stored[(name, row_id)] = Version(int(hlc), NodeId(row_origin))
    result = []
    for d in deltas:
        key = (d.table, d.row_id)
        result.append(Delta(d.table, d.row_id, d.hlc, d.origin, d.values, stored.get(key)))
        stored[key] = d.version
    return result


def stored_versions_high_water(conn: Connection, changes: Sequence[Change]) -> int:
    """The newest stamp among the stored versions of the rows ``changes`` write (0: none).

    One lookup per table for the whole batch (the ids go in as one JSON array): an import of
    thousands of rows pays one statement, not one per row.
    """
    ids: dict[str, list[str]] = {}
    for change in changes:
        # Only well-formed changes: a malformed one fails where it is stamped and checked,
        # with the error it always had (and an iterator is not used up here).
        if type(change) is not tuple or len(change) != 3:
            continue
        name, row_id = getattr(change[0], "name", None), change[1]
        if name in _REPLICATED and type(row_id) is str:
            ids.setdefault(name, []).append(row_id)
    newest = 0
    for name, row_ids in ids.items():
        row = conn.execute(
            f'SELECT max(hlc) FROM "{name}" WHERE id IN (SELECT value FROM json_each(?))',
            (json.dumps(row_ids),),
        ).fetchone()
        newest = max(newest, int(row[0] or 0))
    return newest


def stamp_changes(
    origin: NodeId, stamp: Stamp, floor: int, changes: Sequence[Change]
) -> list[Delta]:
    """Stamp each change above ``floor`` and check it: the deltas, or the first one's error.

    The result is always :func:`_stamp_each`'s; a batch of many rows of one table (an import)
    gets it faster from :func:`_stamp_batch`. The fast path's shortcuts are tied to the slow
    path by the property tests in tests/storage/test_commit_paths.py (same deltas, same error).
    """
    batch = _batch(origin, changes)
    if batch is None:
        return _stamp_each(origin, stamp, floor, changes)
    return _stamp_batch(origin, stamp, floor, *batch)


def _stamp_each(origin: NodeId, stamp: Stamp, floor: int, changes: Sequence[Change]) -> list[Delta]:
    """The definition: each change stamped in turn and checked as the delta it becomes."""
    deltas = []
    for table, row_id, values in changes:
        floor = stamp(floor)
        delta = Delta(table.name, row_id, floor, origin, values)
        delta.check()
        deltas.append(delta)
    return deltas


def _stamp_batch(
    origin: NodeId,
    stamp: Stamp,
    floor: int,
    name: str,
    row_ids: Sequence[RowId],
    rows: Sequence[tuple[Value, ...]],
) -> list[Delta]:
    """:func:`_stamp_each` for a batch that :func:`_batch` has checked in all but its stamps.

    So each stamp is checked on its own: one in range is all :meth:`Delta.check` asks of it,
    and one out of range goes to :meth:`Delta.check`, which raises what the slow path would.
    """
    deltas = []
    for row_id, values in zip(row_ids, rows, strict=True):
        floor = stamp(floor)
        delta = Delta(name, row_id, floor, origin, values)
        if type(floor) is not int or not 0 < floor <= MAX_PACKED:
            delta.check()
        deltas.append(delta)
    return deltas


_Batch = tuple[str, Sequence[RowId], Sequence[tuple[Value, ...]]]


def _batch(origin: NodeId, changes: Sequence[Change]) -> _Batch | None:
    """A batch's one table name, ids and rows if it passes every check but its stamps, else
    ``None``, and the batch goes to :func:`_stamp_each`.

    A batch of many rows (an import) is checked as a whole, a column at a time
    (:func:`feral.sync.delta.accepts_batch`), before it is stamped. Anything else (a short,
    mixed, malformed or refused batch) is checked delta by delta, and so fails exactly as it
    always has; only tuples are taken apart here, since taking apart an iterator would use it up.
    """
    if len(changes) < _BATCH_CHECK_MIN or set(map(type, changes)) != {tuple}:
        return None
    try:
        tables, row_ids, rows = zip(*changes, strict=True)
        names = set(map(_name, tables))
    except (AttributeError, TypeError, ValueError):
        return None  # not all (table, id, values): the row-by-row loop raises as it always has
    if len(names) != 1:
        return None
    (name,) = names
    return (name, row_ids, rows) if accepts_batch(name, origin, row_ids, rows) else None
