"""Sending and applying snapshots (sync/snapshot.py says what they are; PROTOCOL.md §7 and
REPLICATION.md §6).

The sender reads its rows table by table in id order, :data:`MAX_SNAPSHOT_ROWS` a page at
most, each read in its own short read (a snapshot of a large store is never one long
transaction). Rows written while it is read are fine: a row newer than the snapshot's vector
also arrives as a log entry above it, and merges to the same row.

The receiver applies each page in one transaction: it merges the rows as deltas merge (a
tombstone wins, sync/merge.py) without logging them (they are rows, not entries), but for rows
it collected itself under an older version (storage/log/collected.py); and on the final page moves
its vector, entry counts and log floor up to the snapshot's. It never drops a row a page lacks:
tombstone rows are never collected (storage/log/prune.py), so a page carries every row its sender
deleted, and a row it lacks is one its sender never held. A page's collected mark, sent by
older versions that collected tombstones, is read and ignored: trusting it let one page from a
paired peer delete every row of its receiver.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from feral.storage.db import opaque
from feral.storage.db.connection import Connection, schema_of
from feral.sync.delta import Delta
from feral.sync.errors import ClockSkewError
from feral.sync.hlc import check_skew
from feral.sync.schema import BASE_SCHEMA, TABLES, Schema, Table, table_by_code
from feral.sync.snapshot import SnapshotCursor, SnapshotPage
from feral.sync.text import printable
from feral.sync.types import NodeId, RowId, VersionVector

from . import delta_log, integrity
from .collected import collected_through

__all__ = [
    "apply_snapshot_page",
    "log_floors",
    "needs_snapshot",
    "raise_floor",
    "snapshot_pages",
    "snapshot_rows",
    "start_snapshot",
]

_CODES = sorted(table.code for table in TABLES)


def log_floors(conn: Connection) -> VersionVector:
    """Per origin, the newest stamp up to which this log may lack entries (pruned, or taken
    from a snapshot): a peer holding less of that origin must be sent a snapshot."""
    return {NodeId(o): int(h) for o, h in conn.execute("SELECT origin, hlc FROM log_floor")}


def raise_floor(conn: Connection, origin: NodeId, hlc: int) -> None:
    """The log no longer holds every entry of ``origin`` up to ``hlc``."""
    conn.execute(
        "INSERT INTO log_floor(origin, hlc) VALUES (?, ?) "
        "ON CONFLICT(origin) DO UPDATE SET hlc = max(hlc, excluded.hlc)",
        (origin, hlc),
    )


def needs_snapshot(conn: Connection, since: VersionVector, empty_above: int) -> bool:
    """Whether a peer that holds ``since`` must get a snapshot rather than log pages.

    It must when, for some origin, it holds less than this log's floor (those entries are
    gone). It also gets one when it holds nothing at all and this log holds more than
    ``empty_above`` entries (a new device: the rows are fewer than the entries, and cheaper to
    apply); ``empty_above`` below 0 turns that off.
    """
    floors = log_floors(conn)
    if any(since.get(origin, 0) < floor for origin, floor in floors.items()):
        return True
    if since or empty_above < 0:
        return False
    row = conn.execute("SELECT coalesce(sum(entries), 0) FROM version_vector").fetchone()
    return int(row[0]) > empty_above


def start_snapshot(conn: Connection) -> SnapshotCursor:
    """A snapshot as of now: this node's vector and counts, from the first table."""
    vector = delta_log.version_vector(conn)
    return SnapshotCursor(vector, delta_log.log_entry_counts(conn), _CODES[0], "")


def snapshot_rows(conn: Connection) -> int:
    """How many rows a snapshot sends (every row, tombstones included): its ``Pending``."""
    return sum(conn.execute(f'SELECT count(*) FROM "{t.name}"').fetchone()[0] for t in TABLES)


def _select(table: Table) -> str:
    names = ", ".join(f'"{n}"' for n in (*table.column_names, "hlc", "origin", "deleted", "opaque"))
    return f'SELECT {names} FROM "{table.name}" WHERE id > ? ORDER BY id LIMIT ?'


@cache
def _select_by_code(schema: Schema) -> dict[int, str]:
    """Each table's page of rows, by code, in ``schema``'s columns."""
    return {table.code: _select(table) for table in schema.tables}


def _delta(table: Table, bools: tuple[int, ...], record: tuple[Any, ...]) -> Delta:
    """The row as the wire carries it: the values of columns this schema does not know
    (storage/db/opaque.py) follow its own, so a snapshot relays them as a page would."""
    *values, hlc, origin, deleted, stored = record
    if deleted:
        return Delta(table.name, RowId(str(values[0])), int(hlc), NodeId(str(origin)), None)
    for index in bools:
        values[index] = bool(values[index])
    wire = tuple(opaque.wire_values(table, values, stored))
    return Delta(table.name, RowId(str(values[0])), int(hlc), NodeId(str(origin)), wire)


def snapshot_pages(conn: Connection, cursor: SnapshotCursor, limit: int) -> list[SnapshotPage]:
    """The next pages of the snapshot from ``cursor``, ``limit`` rows in all (at least one
    page: an empty table still gets its page, which tells the receiver the table's end).

    Each carries this node's collected mark (storage/log/collected.py), which receivers ignore and
    which no longer rises: kept in the frame for the wire format."""
    read: list[tuple[int, str, str | None, tuple[Delta, ...], bool]] = []
    budget = max(limit, 1)
    schema = schema_of(conn)
    for code in (c for c in _CODES if c >= cursor.table):
        after = cursor.after if code == cursor.table else ""
        table = schema.by_code(code)
        records = conn.execute(_select_by_code(schema)[code], (after, budget)).fetchall()
        bools = tuple(i for i, c in enumerate(table.columns) if c.kind == "bool")
        rows = tuple(_delta(table, bools, tuple(r)) for r in records)
        ended = len(rows) < budget
        through = None if ended else rows[-1].row_id
        read.append((code, after, through, rows, ended and code == _CODES[-1]))
        budget -= len(rows)
        if budget <= 0 or not ended:
            break
    mark = collected_through(conn)
    return [SnapshotPage(cursor.vector, cursor.entries, mark, code, after, through, rows, final)
            for code, after, through, rows, final in read]  # fmt: skip


def apply_snapshot_page(
    conn: Connection, page: SnapshotPage, *, now_ms: int, max_skew_ms: int, peer: str | None
) -> int:
    """Apply one snapshot page inside the caller's write transaction; returns its rows.

    Raises:
        ClockSkewError: a row stamped more than twice the window ahead (nothing is written).
    """
    schema = schema_of(conn)
    if schema is not BASE_SCHEMA:  # decoded by this release's schema: check the store's columns
        page.check(schema)
    for delta in page.rows:
        try:
            check_skew(delta.hlc, now_ms, max_skew_ms, peer, delta.origin)
        except ClockSkewError as exc:
            raise exc.named(printable(delta.origin[:8])) from None
    rows = _without_collisions(conn, _not_collected_here(conn, page), peer, now_ms)
    if rows:
        delta_log.merge_rows(conn, rows)
    if page.final:
        _adopt_holdings(conn, page.vector, page.entries)
    return len(page.rows)


def _without_collisions(
    conn: Connection, rows: tuple[Delta, ...], peer: str | None, now_ms: int
) -> tuple[Delta, ...]:
    """``rows`` but the live ones whose version this node's log holds with other content: the
    same collision as an entry's (storage/log/integrity.py), found, counted and never applied alike.
    A tombstone row is not compared: it stands at the version of its row's newest write, whose
    entry a node that has not met the tombstone holds with its words (sync/merge.py).

    A snapshot also answers a peer that asks for everything because our rows differ at equal
    holdings (storage/link/snapshot_link.py); without this check, a forged entry one side took first
    would travel as a row and be taken by the other side with no alarm.
    """
    by_origin: dict[NodeId, list[Delta]] = {}
    for delta in rows:
        if delta.values is not None:  # a tombstone row stands at its newest write's version
            by_origin.setdefault(delta.origin, []).append(delta)
    collided = [
        delta
        for origin, deltas in by_origin.items()
        for delta in integrity.find_collisions(conn, origin, deltas)
    ]
    if not collided:
        return rows
    integrity.record_collisions(conn, collided, peer or "", now_ms)
    refused = {(d.origin, d.hlc) for d in collided}
    return tuple(d for d in rows if (d.origin, d.hlc) not in refused)


def _not_collected_here(conn: Connection, page: SnapshotPage) -> tuple[Delta, ...]:
    """The page's rows but those this node lacks because it collected them: it has seen the
    write (its vector covers it) and its own collected mark reaches it. A sender that has not
    seen the tombstone still holds the older row; taking it back here would undo the delete
    on this node and on every node this one sends a snapshot."""
    mark = collected_through(conn)
    vector = delta_log.version_vector(conn)
    seen = [d.row_id for d in page.rows if d.hlc <= min(mark, vector.get(d.origin, 0))]
    if not seen:
        return page.rows
    table = table_by_code(page.table).name
    held = {str(r[0]) for r in conn.execute(
        f'SELECT id FROM "{table}" WHERE id IN (SELECT value FROM json_each(?))',
        (json.dumps(seen),))}  # fmt: skip
    gone = set(seen) - held
    return tuple(d for d in page.rows if d.row_id not in gone)


def _adopt_holdings(conn: Connection, vector: VersionVector, entries: dict[NodeId, int]) -> None:
    """This node now holds what the snapshot's vector says, where it held less; its log has
    none of those entries, so its floor rises with it.

    Above what it held, it takes the sender's count, but never fewer than it held plus one (the
    entry at the sender's stamp): a count below that shows the sender's copy has a hole (it
    was restored from an older copy and wrote again, or took a snapshot from one that was).
    Taking it would leave both sides at the same vector and counts, and the hole, with any
    tombstone it lacks, unrepaired; above it, the sender finds the hole on the next CaughtUp
    (§7, Holes) and takes the rows back."""
    mine = delta_log.version_vector(conn)
    counts = delta_log.log_entry_counts(conn)
    for origin, hlc in vector.items():
        held, count = mine.get(origin, 0), counts.get(origin, 0)
        # At an equal stamp with more entries, this copy had a hole (a restore): it is filled.
        if hlc < held or (hlc == held and entries.get(origin, 0) <= count):
            continue
        taken = entries.get(origin, 0) if hlc == held or not count else max(
            entries.get(origin, 0), count + 1)  # fmt: skip
        conn.execute(
            "INSERT INTO version_vector(origin, hlc, entries) VALUES (?, ?, ?) "
            "ON CONFLICT(origin) DO UPDATE SET hlc = excluded.hlc, entries = excluded.entries",
            (origin, hlc, taken),
        )
        raise_floor(conn, origin, hlc)
