"""Search over episodes and facts: the FTS5 (BM25) and vector (cosine) legs, and MMR.

Each leg's scores live in [0, 1]. SQLite's BM25 is negative (lower is better) and its scale
depends on the corpus: in a small store a word found in half the rows has an IDF near zero. So
each hit's BM25 magnitude is divided by the best magnitude of the query (across episodes and
facts): the best textual match scores 1 and the rest keep their proportions. How the hybrid
blends the two legs is storage/search/fusion.py's.
Archived and hard-deleted rows are never returned.

MMR (maximal marginal relevance) reorders a larger pool of candidates so the first results are
not near-duplicates of each other: each step picks the candidate with the best
``lambda * relevance - (1 - lambda) * max_similarity_to_the_results_already_picked``, where
relevance is the hit's score and similarity is the cosine of the stored embeddings.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from feral.storage.db.connection import Connection
from feral.storage.memory.memories import TIER_OF, Row, row_dict, select_sql
from feral.storage.vectors.vectors import (
    VECTOR_TABLES,
    queued_rowids,
    stored_vectors,
)
from feral.sync.schema import EPISODES, Table

if TYPE_CHECKING:
    # numpy is imported by MMR when it runs (as storage/encoders/static_model.py does when a model
    # loads), so commands that never rerank, ``sync now`` among them, skip its import time.
    import numpy as np
    import numpy.typing as npt

    from feral.storage.vectors.vector_index import Context, VectorIndex

    Matrix = npt.NDArray[np.float64]

__all__ = [
    "MMR_POOL_FACTOR",
    "MMR_POOL_MAX",
    "Hit",
    "cosines_of",
    "fts_query",
    "hit_vectors",
    "live_rows",
    "mmr_pool_size",
    "mmr_rerank",
    "query_terms",
    "search_fts",
    "search_vector",
    "still_queued",
]

MMR_POOL_FACTOR = 4
"""MMR picks ``k`` results from about ``MMR_POOL_FACTOR * k`` of the most relevant candidates."""
MMR_POOL_MAX = 400
"""The most candidates MMR considers (never fewer than ``k``): fetching the pool and the rerank's
``k * pool`` dot products are bounded for a large ``k``."""

_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass
class Hit:
    """One search result: the row and how each leg scored it."""

    row: Row
    fts_score: float = 0.0
    vector_score: float = 0.0
    score: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)
    """More fields for :meth:`as_dict` (e.g. ``mmr_score`` after an MMR rerank)."""
    rowid: int | None = None
    """The row's rowid in its table, where the hit came from the database (finds its vector)."""
    coverage: float | None = None
    """The share of the query's words the full-text index finds in the row (by stem where the
    index stems), set by :func:`search_fts`; ``None``: not measured."""
    parts: dict[str, float] = field(default_factory=dict)
    """What each stage of a hybrid search found about the hit (storage/search/fusion.py,
    neighbours.py), by name: the reranker's features (storage/search/rerank.py). Never shown."""

    @property
    def id(self) -> str:
        return str(self.row["id"])

    def as_dict(self) -> dict[str, object]:
        """The shape of DESIGN §6: id, tier, content, score, fts_score, vector_score, and more."""
        return {
            "id": self.id,
            "tier": TIER_OF[self.row["table"]],
            "content": content_of(self.row),
            "score": round(self.score, 6),
            "fts_score": round(self.fts_score, 6),
            "vector_score": round(self.vector_score, 6),
            "row": {k: v for k, v in self.row.items() if k not in ("table",)},
            **self.extra,
        }


def content_of(row: Row) -> str:
    """A row's text as a person reads it."""
    if row["table"] == "episodes":
        return str(row["summary"])
    return f"{row['subject']} {row['predicate']} {row['object']}"


STOP_WORDS = frozenset(
    "a about above after again all am an and any are as at be been before being below between "
    "both but by can could did do does doing down during each few for from further had has have "
    "having he her here hers herself him himself his how i if in into is it its itself just me "
    "more most my myself no nor not now of off on once only or other our ours ourselves out over "
    "own same she should so some such than that the their theirs them themselves then there "
    "these they this those through to too under until up very was we were what when where which "
    "while who whom why will with would you your yours yourself yourselves".split()
)
"""Words dropped from a query when others remain: "what did Priya say about the budget" would
otherwise match (and BM25 would score) nearly every row through "the" and "about", which at 20k
episodes took ten times as long as "Priya say budget" for the same best hits."""


def _content_words(text: str) -> list[str]:
    words = _WORD.findall(text)
    return [w for w in words if w.lower() not in STOP_WORDS] or words


def _quoted(word: str) -> str:
    return '"' + word.replace('"', '""') + '"'


def query_terms(text: str) -> list[str]:
    """The distinct words of a query as quoted FTS5 terms (those :func:`fts_query` ORs)."""
    return [_quoted(w) for w in dict.fromkeys(w.casefold() for w in _content_words(text))]


def fts_query(text: str) -> str | None:
    """Turn free text into a safe FTS5 query: each word quoted, any word may match; stop words
    are left out unless the query has nothing else."""
    words = _content_words(text)
    return " OR ".join(_quoted(w) for w in words) if words else None


def _terms_held(
    conn: Connection, table: Table, terms: list[str], rowids: list[int]
) -> Counter[int]:
    """How many of ``terms`` each row holds, as its full-text index matches them (by stem in
    an index that stems): one statement per term, its matches kept to the rows.

    The ``+`` before ``rowid`` keeps the row list out of the index's hands: given ``rowid IN
    (...)``, FTS5 opens a cursor and parses the term again for each listed row (50 lookups a
    term, 2.9 ms a hybrid query at 6k episodes); without it the term's list of rows is read
    once and filtered (0.24 ms). Either way the same rows match. That read is never longer
    than the one the ranked query made for the same term just before.
    """
    held: Counter[int] = Counter()
    if not rowids:
        return held
    marks = ",".join("?" for _ in rowids)
    for term in terms:
        found = conn.execute(
            f"SELECT rowid FROM {table.name}_fts WHERE {table.name}_fts MATCH ? "
            f"AND +rowid IN ({marks})",
            (term, *rowids),
        )
        held.update(int(r[0]) for r in found)
    return held


def live_rows(conn: Connection, table: Table, rowids: list[int]) -> dict[int, Row]:
    """The rows of ``table`` at ``rowids`` that are neither deleted nor archived, by rowid."""
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


def search_fts(conn: Connection, query: str, limit: int, coverage: bool = False) -> list[Hit]:
    """BM25 over every indexed tier, best first; with ``coverage``, each hit's
    :attr:`Hit.coverage` too (one more lookup per query word: the hybrid's fusion wants it)."""
    match = fts_query(query)
    if match is None:
        return []
    terms = query_terms(query)
    hits: list[Hit] = []
    for table in VECTOR_TABLES:
        ranked = conn.execute(
            f"SELECT f.rowid, bm25({table.name}_fts) FROM {table.name}_fts f "
            f"JOIN {table.name} t ON t.rowid = f.rowid "
            f"WHERE {table.name}_fts MATCH ? AND t.deleted = 0 AND t.archived = 0 "
            f"ORDER BY rank LIMIT ?",
            (match, limit),
        ).fetchall()
        rows = live_rows(conn, table, [r[0] for r in ranked])
        held = _terms_held(conn, table, terms, list(rows)) if coverage else None
        for rowid, bm25 in ranked:
            if rowid in rows:
                hit = Hit(rows[rowid], fts_score=abs(float(bm25)), rowid=rowid)
                if held is not None:
                    hit.coverage = held[rowid] / len(terms)
                hits.append(hit)
    best = max((h.fts_score for h in hits), default=0.0)
    for hit in hits:
        hit.fts_score = hit.fts_score / best if best > 0 else 1.0
    hits.sort(key=lambda h: (-h.fts_score, h.id))
    return hits[:limit]


def _clamped(similarity: float) -> float:
    return max(0.0, min(1.0, similarity))


def _live_nearest(
    conn: Connection, table: Table, nearest: list[tuple[int, float]], limit: int
) -> dict[int, Row]:
    """The live rows among ``nearest`` (best first) that can be among the first ``limit`` hits.

    The leg asks for twice ``limit`` neighbours so that archived or deleted ones leave enough,
    but when the first ``limit`` are all live and the next scores lower, no later one can place:
    their rows are not read (half the leg's row reads: benchmarks/README.md). A tie at the
    cut reads them all, since the order among equal scores is by id.
    """
    rows = live_rows(conn, table, [rowid for rowid, _ in nearest[:limit]])
    rest = nearest[limit:]
    if rest and (len(rows) < limit or _clamped(rest[0][1]) == _clamped(nearest[limit - 1][1])):
        rows.update(live_rows(conn, table, [rowid for rowid, _ in rest]))
    return rows


def search_vector(
    conn: Connection,
    query_vector: bytes,
    limit: int,
    index: VectorIndex | None = None,
    context: Context | None = None,
) -> list[Hit]:
    """Cosine similarity over every embedded tier, best first (similarity clamped to [0, 1]).

    With ``index`` (``feral serve``'s copy of the vectors in memory) the nearest rows come from
    it, else from the stored float32 BLOBs read once: the same rows either way. With
    ``context`` an episode's cosine is mixed with the one said before it
    (storage/search/neighbours.py's :data:`~feral.storage.search.neighbours.TURNS_BEFORE`).
    """
    from feral.storage.vectors.vector_index import scan_table  # numpy: when a search runs

    hits: list[Hit] = []
    for table in VECTOR_TABLES:
        mix = context if table is EPISODES else None
        if index is not None:
            nearest = index.nearest(conn, table, query_vector, limit * 2, mix)
        else:
            nearest = scan_table(conn, table, query_vector, limit * 2, mix)
        rows = _live_nearest(conn, table, nearest, limit)
        for rowid, similarity in nearest:
            if rowid in rows:
                hits.append(Hit(rows[rowid], vector_score=_clamped(similarity), rowid=rowid))
    hits.sort(key=lambda h: (-h.vector_score, h.id))
    return hits[:limit]


def cosines_of(
    conn: Connection,
    query_vector: bytes,
    hits: Sequence[Hit],
    index: VectorIndex | None = None,
    context: Context | None = None,
) -> dict[str, float]:
    """The cosine of each hit's stored vector with the query (clamped to [0, 1]), by id, as
    :func:`search_vector` scores it with the same ``index`` and ``context``: what the vector
    leg would have given the lexical candidates it did not return. Hits without a rowid or a
    vector yet (still queued) are left out. Without ``index`` every vector is read once."""
    from feral.storage.vectors.vector_index import VectorIndex

    held = index if index is not None else VectorIndex()
    found: dict[str, float] = {}
    for table in VECTOR_TABLES:
        mine = {h.rowid: h.id for h in hits if h.row.get("table") == table.name and h.rowid}
        if not mine:
            continue
        mix = context if table is EPISODES else None
        for rowid, cosine in held.cosines(conn, table, query_vector, mine, mix).items():
            found[mine[rowid]] = _clamped(cosine)
    return found


def mmr_pool_size(k: int) -> int:
    """How many candidates to fetch before an MMR rerank down to ``k``."""
    return max(k, min(MMR_POOL_FACTOR * k, MMR_POOL_MAX))


def hit_vectors(conn: Connection, hits: Sequence[Hit]) -> dict[str, list[float]]:
    """The stored embedding of each hit, by id (hits without a rowid or a vector are left out)."""
    found: dict[str, list[float]] = {}
    for table in VECTOR_TABLES:
        mine = [h for h in hits if h.row.get("table") == table.name and h.rowid is not None]
        vectors = stored_vectors(conn, table, [h.rowid for h in mine if h.rowid is not None])
        for hit in mine:
            if hit.rowid in vectors:
                found[hit.id] = vectors[hit.rowid]
    return found


def still_queued(conn: Connection, hits: Sequence[Hit]) -> set[str]:
    """Ids of the hits waiting in the embedding queue: rows the vector leg cannot see yet."""
    waiting: set[str] = set()
    for table in VECTOR_TABLES:
        mine = {h.rowid: h.id for h in hits if h.row.get("table") == table.name and h.rowid}
        waiting.update(mine[rowid] for rowid in queued_rowids(conn, table.name, mine))
    return waiting


def _unit_rows(hits: Sequence[Hit], vectors_by_id: Mapping[str, Sequence[float]]) -> Matrix:
    """One row per hit: its vector scaled to length 1, or zeros (no vector, or a zero one)."""
    import numpy as np

    dims = {len(v) for v in vectors_by_id.values()}
    dim = max(dims, default=0)
    rows = np.zeros((len(hits), dim), dtype=np.float64)
    for index, hit in enumerate(hits):
        vector = vectors_by_id.get(hit.id)
        if vector is not None and len(vector) == dim:
            rows[index] = vector
    norms = np.linalg.norm(rows, axis=1)
    nonzero = norms > 0
    rows[nonzero] /= norms[nonzero, None]
    return rows


def mmr_rerank(
    hits: Sequence[Hit], vectors_by_id: Mapping[str, Sequence[float]], lambda_: float, k: int
) -> list[Hit]:
    """Pick ``k`` of ``hits`` greedily by ``lambda*rel - (1-lambda)*max_sim_to_selected``.

    ``rel`` is each hit's ``score``; similarity is the cosine of the two embeddings, clamped to
    [0, 1]. A hit with no vector (or a zero vector) counts as similar to nothing. Ties go to the
    more relevant hit, so ``lambda_ = 1`` keeps the relevance order. Each picked hit gets its
    ``mmr_score`` (the value it won its place with) in ``extra``; ``score`` stays its relevance.
    """
    if not 0.0 <= lambda_ <= 1.0:
        raise ValueError(f"mmr lambda must be from 0 to 1, got {lambda_}")
    import numpy as np

    ordered = sorted(hits, key=lambda h: (-h.score, h.id))
    units = _unit_rows(ordered, vectors_by_id)
    relevance = lambda_ * np.array([h.score for h in ordered], dtype=np.float64)
    closest = np.zeros(len(ordered), dtype=np.float64)
    free = np.ones(len(ordered), dtype=bool)
    picked: list[Hit] = []
    for _ in range(min(k, len(ordered))):
        values = np.where(free, relevance - (1.0 - lambda_) * closest, -np.inf)
        best = int(np.argmax(values))  # the first of equals: the more relevant hit
        free[best] = False
        chosen = ordered[best]
        chosen.extra["mmr_score"] = round(float(values[best]), 6)
        picked.append(chosen)
        similarity = np.clip(units @ units[best], 0.0, 1.0)
        np.maximum(closest, similarity, out=closest)
    return picked
