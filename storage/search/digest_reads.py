"""The reads behind the digest (node/recall/digest.py): its reference time and its relevant
memories.

Both depend only on replicated state, so two devices that have converged answer the same:

- the reference time is the newest stamp the store holds (the largest entry of the version
  vector, which converged devices share), not either device's wall clock;
- the relevant memories are ranked by BM25 over the full-text index, rounded to six decimals,
  and ties are broken by id, never by SQLite's local rowids; the index's statistics follow the
  rows it covers, which converged devices hold alike (tombstones included).
"""

from __future__ import annotations

from dataclasses import dataclass

from feral.storage.db.connection import Connection
from feral.storage.log.delta_log import clock_high_water
from feral.storage.memory.memories import Row, find_row
from feral.storage.memory.memory_model import DEFAULT_SCOPE, Meta, read_meta
from feral.storage.vectors.vectors import VECTOR_TABLES
from feral.sync.hlc import COUNTER_BITS

from .query import fts_query

__all__ = ["Relevant", "newest_stamp_ms", "relevant_rows"]


@dataclass(frozen=True)
class Relevant:
    """A live memory that matches a query: its row, its meta, and its BM25 relevance (> 0)."""

    row: Row
    meta: Meta
    bm25: float


def newest_stamp_ms(conn: Connection) -> int:
    """The wall-clock part (ms) of the newest stamp in the store; 0 for an empty store."""
    return clock_high_water(conn) >> COUNTER_BITS


def relevant_rows(conn: Connection, query: str, *, scope: str | None, limit: int) -> list[Relevant]:
    """Up to ``limit`` live episodes and facts (of ``scope``, or all) matching ``query`` per
    tier, best BM25 first, then by id."""
    match = fts_query(query)
    if match is None:
        return []
    found: list[Relevant] = []
    for table in VECTOR_TABLES:
        name = table.name
        records = conn.execute(
            f"SELECT t.id, round(-bm25({name}_fts), 6) AS relevance FROM {name}_fts f "
            f"JOIN {name} t ON t.rowid = f.rowid "
            "LEFT JOIN memory_meta m ON m.id = t.id AND m.deleted = 0 "
            f"WHERE {name}_fts MATCH ?1 AND t.deleted = 0 AND t.archived = 0 "
            f"AND (?2 IS NULL OR coalesce(nullif(m.scope, ''), '{DEFAULT_SCOPE}') = ?2) "
            "ORDER BY relevance DESC, t.id LIMIT ?3",
            (match, scope, limit),
        ).fetchall()
        for row_id, relevance in records:
            _, row = find_row(conn, row_id)
            meta = read_meta(conn, row_id, created_at=int(row["created_at"]))
            found.append(Relevant(row, meta, float(relevance)))
    return found
