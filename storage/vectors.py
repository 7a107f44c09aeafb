"""Vectors for episodes and facts, kept in sqlite-vec tables that are derived, never replicated.

Writes queue rows for embedding (triggers fill ``embed_queue``); :func:`embed_pending` drains the
queue with whatever embedder the node has. All vectors in a database come from one embedder,
recorded in ``meta`` with its dimension: switching embedders drops the vectors and re-queues
every row, so a search never compares vectors from two models.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Sequence
from typing import Protocol

from feral.sync.schema import EPISODES, FACTS, Table

from .connection import Connection
from .errors import CorruptDatabase, EmbeddingError

__all__ = [
    "VECTOR_TABLES",
    "Embedder",
    "drop_vectors",
    "embed_pending",
    "embedding_due",
    "embedder_in_use",
    "ensure_vector_tables",
    "pack_vector",
    "reset_vectors",
    "search_similar",
    "stored_vectors",
    "unpack_vector",
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
    """Little-endian float32 bytes of exactly ``dim`` finite values (what sqlite-vec stores)."""
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
    """Create the vector tables for ``embedder``; on a change of embedder, start them afresh."""
    if embedder_in_use(conn) == (embedder.name, embedder.dim):
        return
    for table in VECTOR_TABLES:
        for statement in _queue_triggers(table.name):
            conn.execute(statement)
        conn.execute(f"DROP TABLE IF EXISTS {table.name}_vec")
        conn.execute(
            f"CREATE VIRTUAL TABLE {table.name}_vec USING "
            f"vec0(embedding float[{int(embedder.dim)}] distance_metric=cosine)"
        )
        conn.execute(
            f"INSERT OR IGNORE INTO embed_queue(tbl, row_rowid) "
            f"SELECT '{table.name}', rowid FROM {table.name}"
        )
    conn.executemany(
        "INSERT INTO meta(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [("embedder", embedder.name), ("embed_dim", embedder.dim)],
    )


def reset_vectors(conn: Connection, embedder: Embedder) -> int:
    """Drop every vector and queue every row to be embedded afresh by ``embedder``.

    For ``feral memory reembed``: run inside a write transaction, then drain the queue with
    :func:`embed_pending`. Returns how many rows wait in the queue.
    """
    for table in VECTOR_TABLES:
        conn.execute(f"DROP TABLE IF EXISTS {table.name}_vec")
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


def embedding_due(conn: Connection, embedder: Embedder) -> bool:
    """Whether :func:`embed_pending` has anything to do (a read: most opens need no write)."""
    if embedder_in_use(conn) != (embedder.name, embedder.dim):
        return True
    return conn.execute("SELECT 1 FROM embed_queue LIMIT 1").fetchone() is not None


def embed_pending(conn: Connection, embedder: Embedder, limit: int = EMBED_BATCH) -> int:
    """Embed up to ``limit`` queued rows (run inside a write transaction); returns how many.

    Hard-deleted rows lose their vector; archived rows keep it (search filters them out), so a
    restore needs no re-embedding.
    """
    ensure_vector_tables(conn, embedder)
    done = 0
    for table in VECTOR_TABLES:
        rows = conn.execute(
            f"SELECT q.row_rowid, t.deleted, {', '.join('t.' + c for c in table.fts)} "
            f"FROM embed_queue q JOIN {table.name} t ON t.rowid = q.row_rowid "
            f"WHERE q.tbl = ? LIMIT ?",
            (table.name, limit - done),
        ).fetchall()
        live = [r for r in rows if not r[1]]
        vectors = embedder.embed([_text_of(table, r[2:]) for r in live]) if live else []
        ids = [(r[0],) for r in rows]
        conn.executemany(f"DELETE FROM {table.name}_vec WHERE rowid = ?", ids)
        conn.executemany(
            f"INSERT INTO {table.name}_vec(rowid, embedding) VALUES (?, ?)",
            [(r[0], pack_vector(v, embedder.dim)) for r, v in zip(live, vectors, strict=True)],
        )
        conn.executemany(
            "DELETE FROM embed_queue WHERE tbl = ? AND row_rowid = ?",
            [(table.name, i) for (i,) in ids],
        )
        done += len(rows)
    return done


def drop_vectors(conn: Connection, table: str, row_ids: Sequence[str]) -> None:
    """Delete the vectors of hard-deleted rows now, inside the tombstone's transaction.

    :func:`embed_pending` would too, but only once an embedder runs again; a vector is derived
    from the row's words and goes with them (sqlite-vec zeroes a deleted vector's bytes).
    """
    if embedder_in_use(conn) is None or table not in {t.name for t in VECTOR_TABLES}:
        return
    conn.execute(
        f"DELETE FROM {table}_vec WHERE rowid IN "
        f"(SELECT t.rowid FROM json_each(?) AS j CROSS JOIN {table} AS t ON t.id = j.value)",
        (json.dumps(list(row_ids)),),
    )


def unpack_vector(blob: bytes) -> list[float]:
    """The floats of a little-endian float32 BLOB (the inverse of :func:`pack_vector`)."""
    if len(blob) % 4:
        raise CorruptDatabase(f"a stored vector of {len(blob)} bytes is not float32 values")
    return list(struct.unpack(f"<{len(blob) // 4}f", blob))


def stored_vectors(conn: Connection, table: Table, rowids: Sequence[int]) -> dict[int, list[float]]:
    """The stored vectors of ``rowids`` in ``table`` (rows without one are left out).

    A database that never had an embedder has no vector tables: then nothing is returned.
    """
    if not rowids or embedder_in_use(conn) is None:
        return {}
    found: dict[int, list[float]] = {}
    unique = sorted(set(rowids))
    for start in range(0, len(unique), 500):  # well under SQLite's bound-parameter limit
        chunk = unique[start : start + 500]
        marks = ",".join("?" for _ in chunk)
        for rowid, blob in conn.execute(
            f"SELECT rowid, embedding FROM {table.name}_vec WHERE rowid IN ({marks})", chunk
        ):
            found[int(rowid)] = unpack_vector(bytes(blob))
    return found


def search_similar(
    conn: Connection, table: Table, query_vector: bytes, k: int
) -> list[tuple[int, float]]:
    """The ``k`` nearest rows of ``table`` as ``(rowid, cosine similarity)``, nearest first.

    A zero vector (a text with no words) has no direction: sqlite-vec gives it a NULL cosine
    distance, and such a row is no match for anything, nor anything for a zero query.
    """
    rows = conn.execute(
        f"SELECT rowid, distance FROM {table.name}_vec WHERE embedding MATCH ? AND k = ?",
        (query_vector, k),
    ).fetchall()
    return [(int(rowid), 1.0 - float(d)) for rowid, d in rows if d is not None]
