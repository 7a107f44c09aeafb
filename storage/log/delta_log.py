"""The delta log, the version vector, and applying deltas to rows (DESIGN §4).

Every write, local or remote, goes through :func:`apply_deltas`: one guarded upsert per table for
the whole batch (``ON CONFLICT DO UPDATE ... WHERE (excluded.deleted, excluded.hlc,
excluded.origin) > (deleted, hlc, origin)``: with storage/log/erase.py, the SQL form of
:func:`feral.sync.merge.merge_row`), one insert into the log, one advance of the version
vector, all inside the caller's transaction. The log keeps every entry it receives,
winning or not, so each origin's log is held as a gap-free prefix and can be relayed on.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from itertools import chain
from operator import itemgetter

from feral.storage.db import opaque
from feral.storage.db.connection import Connection, schema_of
from feral.sync.codec import decode_values, encode_values
from feral.sync.delta import MAX_PAGE_DELTAS, Delta, Page, Version
from feral.sync.errors import ClockSkewError, ProtocolError
from feral.sync.hlc import MAX_PACKED, check_skew
from feral.sync.schema import BASE_SCHEMA, Value, table_by_code
from feral.sync.text import printable
from feral.sync.types import NodeId, RowId, VersionVector

from . import fork_queue, integrity, row_digest
from .erase import erase_outdated, tombstones_overtaken
from .row_writes import Writes, upsert_sql, writes_of

__all__ = [
    "answer_request",
    "apply_deltas",
    "apply_page",
    "changes_since",
    "clock_high_water",
    "log_entry_counts",
    "merge_rows",
    "own_high_water",
    "prior_from_columns",
    "version_vector",
]


_UPSERT = {table.name: upsert_sql(table) for table in BASE_SCHEMA.tables}
"""This release's upserts, read at each write (simulations/broken.py swaps them for a broken
merge, to see the simulator catch it); a wider schema's are its :class:`Writes`'."""


_LogEntry = tuple[NodeId, int, int, RowId, bytearray | None, int | None, str | None]
"""A ``delta_log`` row as bound: origin, hlc, table code, row id, payload (``None``: tombstone),
and the version the write replaced (``None, None``: none)."""

_LOG_INSERT = (
    "INSERT OR IGNORE INTO delta_log(origin, hlc, tbl, row_id, payload, prior_hlc, prior_origin)"
    " VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_LOG_ROWS = 100
"""Log entries per ``INSERT`` (700 parameters): each execution of a statement has a fixed cost
(reset, bind, halt) that one entry per execution pays in full."""
_LOG_INSERT_ROWS = _LOG_INSERT + ", (?, ?, ?, ?, ?, ?, ?)" * (_LOG_ROWS - 1)


def apply_deltas(conn: Connection, deltas: Sequence[Delta]) -> None:
    """Merge ``deltas`` into their rows, append them to the log and advance the vector.

    Must run inside a write transaction. Deltas already in the log are ignored (idempotent).
    A write that a tombstone outdates is kept as a tombstone, and a new tombstone drops the
    payloads of its row's earlier entries (storage/log/erase.py): a nuke erases here and on peers.

    One pass builds both the rows and the log entries: this runs for every write, local or
    remote, and its Python work is a visible share of a batch's time.
    """
    for origin, origin_entries in merge_rows(conn, deltas).items():
        _append_log(conn, origin, origin_entries)


def merge_rows(conn: Connection, deltas: Sequence[Delta]) -> dict[NodeId, list[_LogEntry]]:
    """Merge ``deltas`` into their rows (erasing as :func:`apply_deltas` says) and keep the row
    digest; returns the log entries they make, by origin, for the caller to append (a snapshot,
    storage/log/snapshot.py, merges rows without logging them)."""
    rows: dict[str, list[list[Value]]] = defaultdict(list)
    entries: dict[NodeId, list[_LogEntry]] = defaultdict(list)
    writes, upserts = _writes_of(conn)
    erased = erase_outdated(conn, deltas)
    for delta in erased:
        table, row_id, hlc, origin, values = (
            delta.table,
            delta.row_id,
            delta.hlc,
            delta.origin,
            delta.values,
        )
        payload: bytearray | None = None
        if values is None:
            row = [*writes.tables[table].tombstone_values(row_id), hlc, origin, 1, None]
        elif len(values) == writes.width[table]:
            row = [*values, hlc, origin, 0, None]
        else:  # a row of another schema version (sync/unknown.py)
            row = opaque.bound_row(writes.tables[table], values, hlc, origin)
        if values is not None:
            # The driver binds a bytearray as a BLOB directly, but looks bytes up in its adapter
            # registry first, which costs several times this copy; the stored BLOB is the same.
            payload = bytearray(encode_values(values))
        # The same lookup for a bool: STRICT INTEGER columns store 0/1, so bind those instead.
        for index in writes.bools[table]:
            row[index] = 1 if row[index] else 0
        rows[table].append(row)
        prior = delta.prior
        entries[origin].append(
            (origin, hlc, writes.code[table], row_id, payload, *_prior_columns(prior))
        )
    for name, dead in _overtaken_rows(conn, erased, writes):  # rows, not writes: never logged
        rows[name].append(dead)
    change = 0  # the kept row digest moves by the hashes of the rows rewritten (row_digest.py)
    for name, table_rows in rows.items():
        change += row_digest.change_of(conn, name, table_rows)
        conn.executemany(upserts[name], table_rows)
    row_digest.store_digest(conn, change)
    integrity.withdraw_outgrown(conn, rows)
    return entries


def _writes_of(conn: Connection) -> tuple[Writes, Mapping[str, str]]:
    """The statements of the store's schema, and its upserts (this release's are read at each
    write, for simulations/broken.py)."""
    schema = schema_of(conn)
    writes = writes_of(schema)
    return writes, (_UPSERT if schema is BASE_SCHEMA else writes.upsert)


def _overtaken_rows(
    conn: Connection, erased: Sequence[Delta], writes: Writes
) -> Iterator[tuple[str, list[Value]]]:
    """The tombstone rows that newer live writes of dead rows become (storage/log/erase.py), as
    bound to their table's upsert."""
    for overtaken in tombstones_overtaken(conn, erased):
        dead = [*writes.tables[overtaken.table].tombstone_values(overtaken.row_id)]
        for index in writes.bools[overtaken.table]:
            dead[index] = 1 if dead[index] else 0
        yield overtaken.table, [*dead, overtaken.hlc, overtaken.origin, 1, None]


def _append_log(conn: Connection, origin: NodeId, entries: list[_LogEntry]) -> None:
    """Append one origin's entries to the log and advance its vector entry and entry count.

    The count is of entries actually added (a repeat is ignored), so two nodes holding the same
    prefix of an origin's log hold the same count: a differing count at an equal vector entry
    means one of them has a hole (a database restored from an older copy), see
    :func:`log_entry_counts`.
    """
    added = _insert_log(conn, entries)
    conn.execute(
        "INSERT INTO version_vector(origin, hlc, entries) VALUES (?, ?, ?) "
        "ON CONFLICT(origin) DO UPDATE SET hlc = max(hlc, excluded.hlc), "
        "entries = entries + excluded.entries",
        (origin, max(map(_HLC, entries)), added),
    )


def _insert_log(conn: Connection, entries: list[_LogEntry]) -> int:
    """Insert ``entries`` into the log, :data:`_LOG_ROWS` to a statement and the rest one by
    one; returns how many were new. Rows of one ``INSERT OR IGNORE`` are taken in order, as
    separate executions are, so a repeat within the batch is ignored just the same."""
    whole = len(entries) - len(entries) % _LOG_ROWS
    added = 0
    for start in range(0, whole, _LOG_ROWS):
        params = list(chain.from_iterable(entries[start : start + _LOG_ROWS]))
        added += conn.execute(_LOG_INSERT_ROWS, params).rowcount
    if whole < len(entries):
        added += max(conn.executemany(_LOG_INSERT, entries[whole:]).rowcount, 0)
    return added


_HLC = itemgetter(1)


def _prior_columns(prior: Version | None) -> tuple[int | None, str | None]:
    return (None, None) if prior is None else (prior.hlc, prior.origin)


def prior_from_columns(hlc: int | None, origin: str | None) -> Version | None:
    """The replaced version a log entry records (``None``: none; hlc 0: unknown)."""
    return None if hlc is None else Version(int(hlc), NodeId(origin or ""))


def version_vector(conn: Connection) -> VersionVector:
    """For each origin, the newest of its log entries held here."""
    return {NodeId(o): h for o, h in conn.execute("SELECT origin, hlc FROM version_vector")}


def log_entry_counts(conn: Connection) -> dict[NodeId, int]:
    """For each origin, how many of its log entries are held here."""
    return {NodeId(o): n for o, n in conn.execute("SELECT origin, entries FROM version_vector")}


def clock_high_water(conn: Connection) -> int:
    """The newest stamp this database holds, from any origin (shown in status as ``hlc``).

    It is not the floor of local stamps: that is :func:`own_high_water`, since a received stamp
    never lifts the local clock.

    Every stamped or accepted delta advances the version vector in its own transaction, so the
    vector's largest entry is the high-water mark: no separate record to keep in step.
    """
    row = conn.execute("SELECT max(hlc) FROM version_vector").fetchone()
    return int(row[0] or 0)


def own_high_water(conn: Connection, origin: NodeId) -> int:
    """The newest stamp this database holds from ``origin``: for the node itself, the mark its
    next stamp must exceed (its log is read in stamp order, so it only grows).

    Other origins' stamps are not part of it: a received stamp never lifts the local clock
    (sync/hlc.py), so a device whose clock is ahead cannot carry every other device ahead.
    """
    row = conn.execute("SELECT hlc FROM version_vector WHERE origin = ?", (origin,)).fetchone()
    return int(row[0]) if row else 0


def changes_since(
    conn: Connection,
    theirs: VersionVector,
    limit: int = MAX_PAGE_DELTAS,
    ceiling: int | None = None,
) -> list[Page]:
    """Pages of the log entries that a peer holding ``theirs`` lacks, ``limit`` deltas in all.

    Each page holds one origin's entries in HLC order, continuing from the peer's cursor for that
    origin. Call again with the advanced vector for the next pages; an empty list means the peer
    holds everything this node holds (up to ``ceiling``, the newest stamp the peer takes now:
    an origin's entries above it are held back, sync/held_back.py).
    """
    pages: list[Page] = []
    budget = limit
    top = MAX_PACKED if ceiling is None else ceiling
    for origin, mine in sorted(version_vector(conn).items()):
        after = theirs.get(origin, 0)
        if mine <= after or budget <= 0 or after >= top:
            continue
        rows = conn.execute(
            "SELECT hlc, tbl, row_id, payload, prior_hlc, prior_origin FROM delta_log "
            "WHERE origin = ? AND hlc > ? AND hlc <= ? ORDER BY hlc LIMIT ?",
            (origin, after, top, budget),
        ).fetchall()
        if not rows:
            continue  # every entry the peer lacks is held back
        deltas = tuple(_delta_from_log(origin, *row) for row in rows)
        pages.append(Page(origin, after, deltas))
        budget -= len(deltas)
    return pages


def _delta_from_log(
    origin: NodeId,
    hlc: int,
    code: int,
    row_id: str,
    payload: bytes | None,
    prior_hlc: int | None,
    prior_origin: str | None,
) -> Delta:
    values = None if payload is None else decode_values(payload)
    prior = prior_from_columns(prior_hlc, prior_origin)
    return Delta(table_by_code(code).name, RowId(row_id), hlc, origin, values, prior)


def apply_page(
    conn: Connection,
    page: Page,
    *,
    now_ms: int,
    max_skew_ms: int,
    peer: str | None = None,
    checked: bool = False,
    repair: bool = False,
    collided: list[Delta] | None = None,
) -> int:
    """Validate and merge one page from a peer; returns how many of its deltas were new here.

    Everything is checked before anything is written: the page's shape and schema, the skew of
    every stamp, and that the page continues from what this node holds for the origin. Must run
    inside a write transaction, so a refused page leaves the database as it was.

    ``checked=True`` skips re-validating a page that :func:`feral.sync.codec.decode_page` has just
    validated (the skew and gap checks always run), unless the store's schema is wider than this
    release's: its own columns are checked here. The node and the simulations both receive
    pages through this one function.

    Any paired peer may relay any origin, this node's own included: pairing is the trust, and a
    peer that could forge this node's writes could as well forge any other node's. A page of this
    node's own writes that this database lacks is how a wiped database, or one restored from an
    older copy, takes its history back.

    An entry whose ``(origin, hlc)`` this log holds with other content is a collision
    (storage/log/integrity.py): it is recorded as an integrity alarm against ``peer``, added to
    ``collided`` when given, and never applied, in a repair neither: a repair re-sends what we
    hold, so it may fill holes but never replace an entry we have.

    Raises:
        SchemaError, ProtocolError: a malformed page, or one that would leave a gap.
        ClockSkewError: a stamp more than twice the skew window ahead (sync/hlc.py's
            ``delta_limit_ms``); nothing (row or cursor) moves.
    """
    schema = schema_of(conn)
    if not checked or schema is not BASE_SCHEMA:  # a decoded page is checked by this release's
        page.check(schema)
    _check_stamps(conn, page, now_ms, max_skew_ms, peer)
    held = version_vector(conn).get(page.origin, 0)
    if page.after > held:
        raise ProtocolError(
            f"page for {page.origin} continues from {page.after}, but this node holds only "
            f"up to {held}: applying it would leave a gap"
        )
    # Entries at or below what we hold are normally skipped; those we hold are checked first.
    clashes = integrity.find_collisions(
        conn, page.origin, [d for d in page.deltas if d.hlc <= held]
    )
    if clashes:
        integrity.record_collisions(conn, clashes, peer or "", now_ms)
        if collided is not None:
            collided.extend(clashes)
    # In a repair (a re-sent snapshot of an origin this node holds with a hole) every other
    # delta is merged: the log ignores the entries it has, and the guarded upsert keeps the
    # winners.
    if repair:
        bad = {d.hlc for d in clashes}
        fresh = [d for d in page.deltas if d.hlc not in bad]
    else:
        fresh = [d for d in page.deltas if d.hlc > held]
    if fresh:
        apply_deltas(conn, fresh)
        fork_queue.queue_forked_rows(conn, page.origin, fresh)
    return len(fresh)


def _check_stamps(
    conn: Connection, page: Page, now_ms: int, max_skew_ms: int, peer: str | None
) -> None:
    """Refuse the page if a stamp is further ahead than received stamps may be, naming the
    origin that stamped it (by its name too, if a link with it ever told us)."""
    try:
        for delta in page.deltas:
            check_skew(delta.hlc, now_ms, max_skew_ms, peer, page.origin)
    except ClockSkewError as exc:
        row = conn.execute(
            "SELECT name FROM peer_status WHERE node_id = ?", (page.origin,)
        ).fetchone()
        raise exc.named(printable(str(row[0]))) if row and row[0] else exc from None


def answer_request(
    conn: Connection, since: VersionVector, limit: int, ceiling: int | None = None
) -> tuple[list[Page], VersionVector]:
    """What a peer that holds ``since`` should be sent next (no stamp above ``ceiling``), and
    this node's vector.

    An empty list of pages means the peer is caught up (send ``CaughtUp`` with the vector).
    """
    return changes_since(conn, since, limit, ceiling), version_vector(conn)
