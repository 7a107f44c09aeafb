"""Vectors for episodes and facts, kept as float32 BLOBs in tables that are derived, never
replicated (``facts_vectors``, ``episodes_vectors``), and searched with numpy.

Writes queue rows for embedding: triggers fill ``embed_queue`` inside the write's own
transaction, so a committed row always has its queue entry and a crash loses none. The queue is
drained later, off the write path, in two steps: :func:`queued_rows` reads a batch of texts, the
embedder runs with no transaction open (a slow model must not hold the one writer), and
:func:`store_vectors` stores the vectors of the rows that are still queued with the same text.
:func:`embed_pending` does both at once, for callers that hold the writer anyway. All vectors in
a database come from one embedder, recorded in ``meta`` with its dimension: switching embedders
drops the vectors and re-queues every row, so a search never compares vectors from two models.
``meta.vec_generation`` counts the writes that changed vectors, so a copy of them held in
memory (storage/vectors/vector_index.py) knows when it is stale.

A search reads every vector of a table once and scans them as one matrix: a process that searches
again keeps that matrix (storage/vectors/vector_index.py), refreshed by the generation token.
"""

from __future__ import annotations

import json
import math
import secrets
import struct
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol

from feral.storage.db.connection import Connection
from feral.storage.db.errors import CorruptDatabase, EmbeddingError
from feral.sync.schema import EPISODES, FACTS, Table

__all__ = [
    "VECTOR_TABLES",
    "Embedder",
    "Queued",
    "VectorSink",
    "drop_vectors",
    "embed_pending",
    "embed_texts",
    "embedding_due",
    "embedder_in_use",
    "ensure_vector_tables",
    "pack_vector",
    "queue_length",
    "queue_waiting",
    "queued_rowids",
    "queued_rows",
    "reset_vectors",
    "search_similar",
    "store_vectors",
    "stored_vectors",
    "unpack_vector",
    "vector_generation",
]

VECTOR_TABLES: tuple[Table, ...] = (EPISODES, FACTS)
EMBED_BATCH = 64
"""Rows embedded per write transaction. Embedding runs inside it, and the default encoder
embeds a few hundred short texts per second per core: 64 keeps the lock, and so any other
process's wait for it, well under a second (``busy_timeout`` is 5 s) even on a busy machine."""


class Embedder(Protocol):
    """Turns texts into unit vectors. ``name`` and ``dim`` identify the vectors it makes."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


def pack_vector(vector: Sequence[float], dim: int) -> bytes:
    """Little-endian float32 bytes of exactly ``dim`` finite values (what the tables store)."""
    if len(vector) != dim:
        raise EmbeddingError(f"embedding has {len(vector)} dimensions, expected {dim}")
    # A finite sum proves every value finite (NaN or infinity would spread into it); only an
    # infinite or NaN sum, or a sum that overflowed, needs the per-value check.
    if not math.isfinite(sum(vector)) and not all(math.isfinite(x) for x in vector):
        raise EmbeddingError("embedding contains NaN or infinity")
    return struct.pack(f"<{dim}f", *vector)


def _queue_triggers(table: str) -> list[str]:
    """Triggers that queue a row for (re-)embedding whenever its content is written.

    They exist only once a node has an embedder: a node without a model pays nothing per write.
    Not INSERT OR IGNORE: inside a trigger, the firing statement's conflict policy overrides the
    body's, so an upsert would turn a repeat into a constraint failure; an upsert clause of the
    trigger's own is not overridden.
    """
    body = (
        f"INSERT INTO embed_queue(tbl, row_rowid) VALUES ('{table}', new.rowid) "
        f"ON CONFLICT DO NOTHING;"
    )
    return [
        f"CREATE TRIGGER IF NOT EXISTS {table}_embed_{suffix} AFTER {event} ON {table} "
        f"BEGIN {body} END"
        for suffix, event in (("ai", "INSERT"), ("au", "UPDATE"))
    ]


def embedder_in_use(conn: Connection) -> tuple[str, int] | None:
    """The ``(name, dim)`` of the embedder that made this database's vectors, if any."""
    rows = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('embedder', 'embed_dim')"))
    if "embedder" not in rows:
        return None
    return str(rows["embedder"]), int(rows["embed_dim"])


def ensure_vector_tables(conn: Connection, embedder: Embedder) -> None:
    """Make the vector tables ``embedder``'s; on a change of embedder, start them afresh.

    The tables themselves always exist (migration 0019); what an embedder brings is the triggers
    that queue rows, and the vectors it made.
    """
    if embedder_in_use(conn) == (embedder.name, embedder.dim):
        return
    for table in VECTOR_TABLES:
        for statement in _queue_triggers(table.name):
            conn.execute(statement)
        conn.execute(f"DELETE FROM {table.name}_vectors")
        conn.execute(
            f"INSERT OR IGNORE INTO embed_queue(tbl, row_rowid) "
            f"SELECT '{table.name}', rowid FROM {table.name}"
        )
    conn.executemany(
        "INSERT INTO meta(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [("embedder", embedder.name), ("embed_dim", embedder.dim)],
    )
    _bump_generation(conn)


def reset_vectors(conn: Connection, embedder: Embedder) -> int:
    """Drop every vector and queue every row to be embedded afresh by ``embedder``.

    For ``feral memory reembed``: run inside a write transaction, then drain the queue with
    :func:`embed_pending`. Returns how many rows wait in the queue.
    """
    conn.execute("DELETE FROM meta WHERE key IN ('embedder', 'embed_dim')")
    ensure_vector_tables(conn, embedder)
    return int(conn.execute("SELECT count(*) FROM embed_queue").fetchone()[0])


def _text_of(table: Table, row: Sequence[object]) -> str:
    if table is EPISODES:
        summary, entities = str(row[0]), str(row[1])
        try:
            names = " ".join(str(e) for e in json.loads(entities))
        except ValueError:
            names = entities
        return f"{summary} {names}".strip()
    return " ".join(str(part).replace("_", " ") for part in row)


@dataclass(frozen=True)
class Queued:
    """A queued row and the text to embed; ``text`` is ``None`` when the row has none any more
    (hard-deleted, or gone): its vector is dropped rather than made."""

    table: str
    rowid: int
    text: str | None


class VectorSink(Protocol):
    """Told of every vector :func:`store_vectors` writes or drops (an in-memory copy of them).

    ``before`` and ``after`` are ``meta.vec_generation`` around the write: a copy that was at
    ``before`` is exactly up to date at ``after`` once it applies ``changes``; any other copy is
    stale and must reload. It is called inside the transaction, before the commit.
    ``changes`` holds ``(table, rowid, float32 bytes or None)``.
    """

    def changed(
        self, before: int, after: int, changes: Sequence[tuple[str, int, bytes | None]]
    ) -> None: ...


def vector_generation(conn: Connection) -> int:
    """A token that changes with every write that changes this database's vectors (0 before
    the first)."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'vec_generation'").fetchone()
    return int(row[0]) if row else 0


def _bump_generation(conn: Connection) -> int:
    """Mark a write that changed vectors (inside that write's transaction).

    A random token, not a count: a copy told of a write whose commit then failed holds the
    token that write chose, and the next write (which starts again from the committed one)
    cannot choose it too, so the copy sees that it is stale.
    """
    after = secrets.randbits(62) + 1
    conn.execute(
        "INSERT INTO meta(key, value) VALUES ('vec_generation', ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (after,),
    )
    return after


def queue_length(conn: Connection) -> int:
    """How many rows wait to be embedded."""
    return int(conn.execute("SELECT count(*) FROM embed_queue").fetchone()[0])


def queue_waiting(conn: Connection) -> bool:
    """Whether any row waits to be embedded (cheaper than counting a long queue)."""
    return conn.execute("SELECT 1 FROM embed_queue LIMIT 1").fetchone() is not None


def queued_rowids(conn: Connection, table: str, rowids: Collection[int]) -> set[int]:
    """Those of ``table``'s ``rowids`` waiting in the embedding queue: rows the vector leg
    cannot see yet (one cheap read when nothing waits, the usual case)."""
    if not rowids or not queue_waiting(conn):
        return set()
    marks = ", ".join("?" * len(rowids))
    rows = conn.execute(
        f"SELECT row_rowid FROM embed_queue WHERE tbl = ? AND row_rowid IN ({marks})",
        (table, *rowids),
    ).fetchall()
    return {int(r[0]) for r in rows}


def embedding_due(conn: Connection, embedder: Embedder) -> bool:
    """Whether anything waits for ``embedder`` (a read: most opens need no write)."""
    if embedder_in_use(conn) != (embedder.name, embedder.dim):
        return True
    return conn.execute("SELECT 1 FROM embed_queue LIMIT 1").fetchone() is not None


def _queued_in(
    conn: Connection, table: Table, where: str, params: Sequence[object]
) -> list[Queued]:
    columns = ", ".join("t." + c for c in table.fts)
    rows = conn.execute(
        f"SELECT q.row_rowid, coalesce(t.deleted, 1), {columns} "
        f"FROM embed_queue q LEFT JOIN {table.name} t ON t.rowid = q.row_rowid "
        f"WHERE q.tbl = ? {where}",
        (table.name, *params),
    ).fetchall()
    return [Queued(table.name, int(r[0]), None if r[1] else _text_of(table, r[2:])) for r in rows]


def queued_rows(conn: Connection, limit: int = EMBED_BATCH) -> list[Queued]:
    """Up to ``limit`` queued rows with their texts (a read: no transaction needed)."""
    found: list[Queued] = []
    for table in VECTOR_TABLES:
        if len(found) < limit:
            found += _queued_in(conn, table, "LIMIT ?", (limit - len(found),))
    return found


def store_vectors(
    conn: Connection,
    embedder: Embedder,
    batch: Sequence[Queued],
    vectors: Sequence[Sequence[float] | None],
    sink: VectorSink | None = None,
) -> int:
    """Store the vectors ``embedder`` made for ``batch`` (run inside a write transaction).

    Only rows still queued with the text that was embedded are stored and dequeued: a row
    written again since :func:`queued_rows` read it stays queued (its trigger found the entry
    there) and is embedded afresh next time; a row another process embedded meanwhile is left
    alone. Returns how many rows were done.
    """
    ensure_vector_tables(conn, embedder)
    made = {(q.table, q.rowid, q.text): v for q, v in zip(batch, vectors, strict=True)}
    changes: list[tuple[str, int, bytes | None]] = []
    for table in VECTOR_TABLES:
        rowids = json.dumps([q.rowid for q in batch if q.table == table.name])
        for now in _queued_in(conn, table, "AND q.row_rowid IN (SELECT value FROM json_each(?))",
                              (rowids,)):  # fmt: skip
            key = (now.table, now.rowid, now.text)
            if key not in made:
                continue  # written again since it was read: embedded next time
            vector = made[key]
            blob = None if vector is None or now.text is None else pack_vector(vector, embedder.dim)
            changes.append((now.table, now.rowid, blob))
    if changes:
        _write_changes(conn, changes)
        before = vector_generation(conn)
        after = _bump_generation(conn)
        if sink is not None:
            sink.changed(before, after, changes)
    return len(changes)


def _write_changes(conn: Connection, changes: Sequence[tuple[str, int, bytes | None]]) -> None:
    for table in VECTOR_TABLES:
        mine = [(rowid, blob) for name, rowid, blob in changes if name == table.name]
        conn.executemany(
            f"DELETE FROM {table.name}_vectors WHERE rowid = ?",
            [(r,) for r, b in mine if b is None],
        )
        conn.executemany(
            f"INSERT OR REPLACE INTO {table.name}_vectors(rowid, embedding) VALUES (?, ?)",
            [(r, b) for r, b in mine if b is not None],
        )
        conn.executemany(
            "DELETE FROM embed_queue WHERE tbl = ? AND row_rowid = ?",
            [(table.name, r) for r, _ in mine],
        )


def embed_pending(
    conn: Connection,
    embedder: Embedder,
    limit: int = EMBED_BATCH,
    sink: VectorSink | None = None,
) -> int:
    """Embed up to ``limit`` queued rows in the caller's write transaction; returns how many.

    Hard-deleted rows lose their vector; archived rows keep it (search filters them out), so a
    restore needs no re-embedding. The embedder runs while the writer is held: fine for a test
    or a fast model; the node embeds between transactions instead (node/embedding.py).
    """
    ensure_vector_tables(conn, embedder)
    batch = queued_rows(conn, limit)
    return store_vectors(conn, embedder, batch, embed_texts(embedder, batch), sink)


def embed_texts(embedder: Embedder, batch: Sequence[Queued]) -> list[list[float] | None]:
    """The vector of each queued row that has a text, ``None`` for the rest."""
    texts = [q.text for q in batch if q.text is not None]
    made = iter(embedder.embed(texts) if texts else [])
    return [None if q.text is None else next(made) for q in batch]


def drop_vectors(conn: Connection, table: str, row_ids: Sequence[str]) -> None:
    """Delete the vectors of hard-deleted rows now, inside the tombstone's transaction.

    :func:`embed_pending` would too, but only once an embedder runs again; a vector is derived
    from the row's words and goes with them (``secure_delete`` zeroes the freed bytes).
    """
    if embedder_in_use(conn) is None or table not in {t.name for t in VECTOR_TABLES}:
        return
    conn.execute(
        f"DELETE FROM {table}_vectors WHERE rowid IN "
        f"(SELECT t.rowid FROM json_each(?) AS j CROSS JOIN {table} AS t ON t.id = j.value)",
        (json.dumps(list(row_ids)),),
    )
    _bump_generation(conn)


def unpack_vector(blob: bytes) -> list[float]:
    """The floats of a little-endian float32 BLOB (the inverse of :func:`pack_vector`)."""
    if len(blob) % 4:
        raise CorruptDatabase(f"a stored vector of {len(blob)} bytes is not float32 values")
    return list(struct.unpack(f"<{len(blob) // 4}f", blob))


def stored_vectors(conn: Connection, table: Table, rowids: Sequence[int]) -> dict[int, list[float]]:
    """The stored vectors of ``rowids`` in ``table`` (rows without one are left out).

    A database that never had an embedder has no vectors: then nothing is returned.
    """
    if not rowids or embedder_in_use(conn) is None:
        return {}
    found: dict[int, list[float]] = {}
    unique = sorted(set(rowids))
    for start in range(0, len(unique), 500):  # well under SQLite's bound-parameter limit
        chunk = unique[start : start + 500]
        marks = ",".join("?" for _ in chunk)
        for rowid, blob in conn.execute(
            f"SELECT rowid, embedding FROM {table.name}_vectors WHERE rowid IN ({marks})", chunk
        ):
            found[int(rowid)] = unpack_vector(bytes(blob))
    return found


def search_similar(
    conn: Connection, table: Table, query_vector: bytes, k: int
) -> list[tuple[int, float]]:
    """The ``k`` nearest rows of ``table`` as ``(rowid, cosine similarity)``, nearest first.

    Reads every vector of ``table`` for this one query: a process that searches again holds them
    instead (:class:`~feral.storage.vectors.vector_index.VectorIndex`). A zero vector (a text with
    no words) has no direction: such a row is no match for anything, nor anything for a zero query.
    """
    from .vector_index import scan_table  # numpy: imported when a search runs

    return scan_table(conn, table, query_vector, k)
