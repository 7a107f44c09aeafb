"""Search over episodes and facts: FTS5 (BM25), vectors (cosine) and the hybrid of the two.

Scores live in [0, 1] so the hybrid blend ``alpha * vector + (1 - alpha) * fts`` means the same
thing for every query. SQLite's BM25 is negative (lower is better) and its scale depends on the
corpus: in a small store a word found in half the rows has an IDF near zero. So each hit's BM25
magnitude is divided by the best magnitude of the query (across episodes and facts): the best
textual match scores 1 and the rest keep their proportions.
Archived and hard-deleted rows are never returned.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from sync.schema import Table

from .connection import Connection
from .memories import TIER_OF, Row, row_dict, select_sql
from .vectors import VECTOR_TABLES, search_similar

__all__ = ["Hit", "Strategy", "fts_query", "search_fts", "search_vector", "merge_hybrid"]

Strategy = Literal["fts", "vector", "hybrid"]
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass
class Hit:
    """One search result: the row and how each leg scored it."""

    row: Row
    fts_score: float = 0.0
    vector_score: float = 0.0
    score: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return str(self.row["id"])

    def as_dict(self) -> dict[str, Any]:
        """The shape of DESIGN §6: id, tier, content, score, fts_score, vector_score, and more."""
        return {
            "id": self.id,
            "tier": TIER_OF[self.row["table"]],
            "content": content_of(self.row),
            "score": round(self.score, 6),
            "fts_score": round(self.fts_score, 6),
            "vector_score": round(self.vector_score, 6),
            "row": {k: v for k, v in self.row.items() if k not in ("table",)},
        }


def content_of(row: Row) -> str:
    """A row's text as a person reads it."""
    if row["table"] == "episodes":
        return str(row["summary"])
    return f"{row['subject']} {row['predicate']} {row['object']}"


def fts_query(text: str) -> str | None:
    """Turn free text into a safe FTS5 query: each word quoted, any word may match."""
    words = _WORD.findall(text)
    if not words:
        return None
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)


def _live_rows(conn: Connection, table: Table, rowids: list[int]) -> dict[int, Row]:
    if not rowids:
        return {}
    marks = ",".join("?" for _ in rowids)
    records = conn.execute(
        f"{select_sql(table).replace('SELECT ', 'SELECT rowid, ', 1)} "
        f"WHERE rowid IN ({marks}) AND deleted = 0 AND archived = 0",
        rowids,
    ).fetchall()
    rows = {}
    for record in records:
        row = row_dict(table, record[1:])
        row["table"] = table.name
        rows[int(record[0])] = row
    return rows


def search_fts(conn: Connection, query: str, limit: int) -> list[Hit]:
    """BM25 over every indexed tier, best first."""
    match = fts_query(query)
    if match is None:
        return []
    hits: list[Hit] = []
    for table in VECTOR_TABLES:
        ranked = conn.execute(
            f"SELECT f.rowid, bm25({table.name}_fts) FROM {table.name}_fts f "
            f"JOIN {table.name} t ON t.rowid = f.rowid "
            f"WHERE {table.name}_fts MATCH ? AND t.deleted = 0 AND t.archived = 0 "
            f"ORDER BY rank LIMIT ?",
            (match, limit),
        ).fetchall()
        rows = _live_rows(conn, table, [r[0] for r in ranked])
        for rowid, bm25 in ranked:
            if rowid in rows:
                hits.append(Hit(rows[rowid], fts_score=abs(float(bm25))))
    best = max((h.fts_score for h in hits), default=0.0)
    for hit in hits:
        hit.fts_score = hit.fts_score / best if best > 0 else 1.0
    hits.sort(key=lambda h: (-h.fts_score, h.id))
    return hits[:limit]


def search_vector(conn: Connection, query_vector: bytes, limit: int) -> list[Hit]:
    """Cosine similarity over every embedded tier, best first (similarity clamped to [0, 1])."""
    hits: list[Hit] = []
    for table in VECTOR_TABLES:
        nearest = search_similar(conn, table, query_vector, limit * 2)
        rows = _live_rows(conn, table, [rowid for rowid, _ in nearest])
        for rowid, similarity in nearest:
            if rowid in rows:
                hits.append(Hit(rows[rowid], vector_score=max(0.0, min(1.0, similarity))))
    hits.sort(key=lambda h: (-h.vector_score, h.id))
    return hits[:limit]


def merge_hybrid(fts: list[Hit], vector: list[Hit], alpha: float, limit: int) -> list[Hit]:
    """Blend the two legs by id: ``alpha * vector + (1 - alpha) * fts``, best first."""
    merged: dict[str, Hit] = {}
    for hit in fts:
        merged[hit.id] = hit
    for hit in vector:
        if hit.id in merged:
            merged[hit.id].vector_score = hit.vector_score
        else:
            merged[hit.id] = hit
    for hit in merged.values():
        hit.score = alpha * hit.vector_score + (1.0 - alpha) * hit.fts_score
    return sorted(merged.values(), key=lambda h: (-h.score, h.id))[:limit]
