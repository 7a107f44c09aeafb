"""A digest of this node's replicated rows, kept up to date with every write
(docs/REPLICATION.md §5).

Two nodes whose vectors and entry counts are equal hold the same entries by stamp, but not
necessarily the same rows: a forged entry that reached one of them first, under a stamp its
origin also used, is kept there and the real one never arrives (issue 11, finding 7).

The export's SHA-256 (``state_digest``) tells them apart, but it reads and serialises every
row: 0.65-3.9 s on a 20,000-row store, far too much for every ``CaughtUp``. So the node keeps
a second digest of the same rows, the sum modulo 2²⁵⁶ of each row's SHA-256 (an order-free set
hash), in ``meta`` under ``row_digest``, moved in the transaction that writes the rows:
:func:`feral.storage.log.delta_log.apply_deltas`, the one path of every row write, reads the rows
of its batch before its upsert, folds the batch over them by the upsert's own rule (strictly
greater ``(hlc, origin)`` wins, :func:`change_of`) and swaps the hashes of the rows that
change. A ``CaughtUp`` then costs one small read. It covers the rows themselves, the same ones
the export holds, and not the log: two honest logs can differ in which payloads a nuke
erased (an entry older than a tombstone that lost to a newer write), while their rows are
equal.

A sum of hashes is not a signature: a forger changing one row would need a second preimage,
but one who controls many rows could aim for a colliding sum. Signed per-origin logs close
that (docs/PROTOCOL.md §11).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import cast

import msgpack

from feral.storage.db import opaque
from feral.storage.db.connection import Connection, schema_of
from feral.sync.schema import Schema, Table, Value

__all__ = [
    "DIGEST_BYTES",
    "computed_afresh",
    "fill_missing",
    "row_digest",
    "change_of",
    "rows_hash",
    "store_digest",
]

DIGEST_BYTES = 32
_MODULUS = 1 << (8 * DIGEST_BYTES)
_KEY = "row_digest"


def _select(table: Table) -> str:
    """The exported columns of ``table`` (its values, clock fields and the values of columns
    unknown here), names from the registry."""
    names = ", ".join(f'"{n}"' for n in (*table.column_names, "hlc", "origin", "deleted", "opaque"))
    return f'SELECT {names} FROM "{table.name}"'


@dataclass(frozen=True)
class _Hashing:
    """What hashing rows of one schema needs, by table name: built once per schema."""

    tables: Mapping[str, Table]
    select: Mapping[str, str]
    reals: Mapping[str, tuple[int, ...]]
    """Columns a STRICT table stores as REAL: a value bound as an int reads back as a float."""
    plain: Mapping[str, bool]
    """Tables with no column a schema extension added: their rows hash as they always have."""


@cache
def _hashing(schema: Schema) -> _Hashing:
    return _Hashing(
        tables={t.name: t for t in schema.tables},
        select={t.name: _select(t) for t in schema.tables},
        reals={
            t.name: tuple(i for i, c in enumerate(t.columns) if c.kind == "real")
            for t in schema.tables
        },
        plain={t.name: t.base_count == len(t.columns) for t in schema.tables},
    )


_PACKERS = threading.local()
"""One msgpack packer per thread (a packer is not thread-safe; making one per row is slow)."""


def _pack(values: list[object]) -> bytes:
    try:
        pack: Callable[[object], bytes] = _PACKERS.pack
    except AttributeError:
        pack = _PACKERS.pack = msgpack.Packer(use_bin_type=True).pack
    return pack(values)


def _hash(hashing: _Hashing, table: str, record: Sequence[object]) -> int:
    """One row's SHA-256 as an integer. Every written row is hashed, so this is kept lean
    (about 3 µs): one packer a thread, and the REAL columns (one, in facts) fixed up only when
    one holds an int (a generator expression here cost a fifth of the time).

    ``record`` ends with the row's ``deleted`` flag and its ``opaque`` column. The row is hashed
    in its wire form (sync/unknown.py), so that nodes of two schema versions holding the same row
    agree: a row without unknown values in a table this version did not extend hashes as it
    always has.

    A tombstone hashes to 0: it holds no words, and tombstones are collected (storage/log/prune.py)
    on each node at its own pace, so two nodes at equal vectors may hold different ones; a
    live row one side holds and the other deleted still shows in the digests."""
    if record[-2]:
        return 0
    if record[-1] is None and hashing.plain[table]:
        record = record[:-1]
    else:
        *known, hlc, origin, deleted, stored = record
        schema = hashing.tables[table]
        wire = opaque.wire_values(schema, cast("list[Value]", known), stored)  # bools: 0/1
        record = [*(int(v) if type(v) is bool else v for v in wire), hlc, origin, deleted]
    reals = hashing.reals[table]
    for index in reals:
        if type(record[index]) is int:
            record = [float(v) if i in reals and type(v) is int else v
                      for i, v in enumerate(record)]  # fmt: skip
            break
    return int.from_bytes(hashlib.sha256(_pack([table, *record])).digest(), "big")


def rows_hash(conn: Connection, table: str, ids: Iterable[str]) -> int:
    """The summed hashes of ``table``'s rows with these ids, as they are now."""
    hashing = _hashing(schema_of(conn))
    query = f"{hashing.select[table]} WHERE id IN (SELECT value FROM json_each(?))"
    rows = conn.execute(query, (json.dumps(sorted(set(ids))),))
    return sum(_hash(hashing, table, r) for r in rows)


def change_of(conn: Connection, table: str, rows: Sequence[Sequence[object]]) -> int:
    """How the digest moves when ``rows`` (as bound to the upsert: values, hlc, origin,
    deleted, opaque) are upserted into ``table`` in order, each winning only over a row it
    beats by the upsert's guard (a tombstone over a live row, else the later version).

    The rows held are read once; the winners are found here by the guard's own order, so the
    rows written need not be read back (the values bound are the values stored).
    """
    hashing = _hashing(schema_of(conn))
    query = f"{hashing.select[table]} WHERE id IN (SELECT value FROM json_each(?))"
    ids = json.dumps(sorted({str(row[0]) for row in rows}))
    held = {record[0]: tuple(record) for record in conn.execute(query, (ids,))}
    final: dict[object, Sequence[object]] = dict(held)
    for row in rows:
        current = final.get(row[0])
        if current is None or (row[-2], row[-4], row[-3]) > (current[-2], current[-4], current[-3]):
            final[row[0]] = row
    change = 0
    for key, row in final.items():
        before = held.get(key)
        if before is None or tuple(row) != before:
            change += _hash(hashing, table, row) - (
                0 if before is None else _hash(hashing, table, before)
            )
    return change


def _all_rows(conn: Connection) -> int:
    hashing = _hashing(schema_of(conn))
    return sum(_hash(hashing, name, r) for name in hashing.tables
               for r in conn.execute(hashing.select[name]))  # fmt: skip


def _stored(conn: Connection) -> int | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (_KEY,)).fetchone()
    return None if row is None else int.from_bytes(row[0], "big")


def store_digest(conn: Connection, change: int) -> None:
    """Move the kept digest by ``change`` (inside the write's transaction)."""
    current = _stored(conn)
    total = _all_rows(conn) if current is None else current + change
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET "
        "value = excluded.value",
        (_KEY, (total % _MODULUS).to_bytes(DIGEST_BYTES, "big")),
    )


def fill_missing(conn: Connection) -> None:
    """Compute the digest of a database from before it was kept; a read when it is kept."""
    if _stored(conn) is not None:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        store_digest(conn, 0)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def computed_afresh(conn: Connection) -> bytes:
    """The digest computed from every row, ignoring the kept one (tests and the oracle)."""
    return (_all_rows(conn) % _MODULUS).to_bytes(DIGEST_BYTES, "big")


def row_digest(conn: Connection) -> bytes:
    """The digest of this node's replicated rows (computed on the spot if never kept)."""
    current = _stored(conn)
    total = _all_rows(conn) if current is None else current
    return (total % _MODULUS).to_bytes(DIGEST_BYTES, "big")
