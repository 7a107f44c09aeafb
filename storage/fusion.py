"""Hybrid fusion: blending the BM25 and cosine legs so the blend never ranks below its better leg.

Why not the plain blend of raw scores: a max-normalised BM25 gives the best lexical match of
every query 1.0, even when it shares only a common word with the query, while the cosines of a
query's candidates differ by 0.05 to 0.2. Blended 50/50, the lexical leg decides the order, and
on queries worded differently from their memory the hybrid did worse than the vector leg alone.

So each leg is normalised over its own candidate pool (min-max: the leg's best candidate scores
1 and its weakest 0, so both legs spread over the same range; see :func:`min_max` for a leg that
returned fewer candidates than it was asked for), a candidate the lexical leg did
not return scores 0 in it, and a candidate the vector leg did not return gets its real cosine
(normalised with the same pool bounds, clipped to [0, 1]). The lexical score of a candidate is
also scaled by the share of the query's words it contains: BM25 gives a rare word a large weight
whatever else the query says, so a memory that shares one word out of four with the query is
weak lexical evidence, and one that holds every word is strong. The fused score is
``alpha * vector + (1 - alpha) * lexical``; candidates whose fused score is below
:data:`NOISE_FLOOR` are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np

from .connection import Connection
from .search import STOP_WORDS, Hit, content_of, hit_vectors

__all__ = [
    "FUSION_POOL",
    "NOISE_FLOOR",
    "fuse",
    "fusion_pool_size",
    "min_max",
    "query_cosines",
    "term_coverage",
]

FUSION_POOL = 50
"""Candidates each leg contributes to a hybrid search (never fewer than ``k``): min-max needs a
pool deeper than the page shown, or the page's last hit would always score 0."""
NOISE_FLOOR = 0.05
"""A fused score below this is noise: near the bottom of both legs' pools."""

_WORD = re.compile(r"\w+", re.UNICODE)


def fusion_pool_size(k: int) -> int:
    """How many candidates each leg fetches for a hybrid search of ``k`` results."""
    return max(k, FUSION_POOL)


def min_max(values: Sequence[float], pool: int) -> tuple[float, float]:
    """The ``(low, span)`` that maps a leg's candidate scores onto [0, 1].

    A full pool (``pool`` candidates or more) was cut off at its weakest candidate, so that one
    is the floor. A leg that returned fewer returned every row it could score, and everything
    else in the store scores 0 in it (no word in common, or no likeness), so 0 is the floor: in a
    small store the third of three matches is not pushed to 0 just for being last.
    """
    if not values:
        return 0.0, 0.0
    low = min(values) if len(values) >= pool else min(0.0, *values)
    return low, max(values) - low


def _scaled(value: float, low: float, span: float) -> float:
    """``value`` on the pool's [0, 1] scale; with no spread every candidate is the best."""
    if span <= 0.0:
        return 1.0 if value >= low else 0.0
    return min(1.0, max(0.0, (value - low) / span))


def _words(text: str) -> set[str]:
    return {w.casefold() for w in _WORD.findall(text)}


def term_coverage(query: str, hit: Hit) -> float:
    """The share of the query's words that occur in the hit's text, stop words left out unless
    the query has nothing else (as :func:`~feral.storage.search.fts_query` does)."""
    words = _words(query)
    wanted = {w for w in words if w not in STOP_WORDS} or words
    if not wanted:
        return 0.0
    return len(wanted & _words(content_of(hit.row))) / len(wanted)


def fuse(
    query: str,
    fts: Sequence[Hit],
    vector: Sequence[Hit],
    cosines: Mapping[str, float],
    alpha: float,
    limit: int,
    pool: int,
) -> list[Hit]:
    """Blend the two legs by id, best first, with the noise dropped.

    Args:
        query: the query text (for the share of its words each lexical hit holds).
        fts: the lexical leg's candidates, with ``fts_score`` set.
        vector: the vector leg's candidates, with ``vector_score`` set.
        cosines: the cosine of the candidates the vector leg did not return, by id (a
            candidate with no vector is left out and scores 0 in the vector leg).
        alpha: the weight of the vector leg.
        limit: the most results.
        pool: how many candidates each leg was asked for (:func:`fusion_pool_size`).
    """
    f_low, f_span = min_max([h.fts_score for h in fts], pool)
    v_low, v_span = min_max([h.vector_score for h in vector], pool)
    merged: dict[str, Hit] = {h.id: h for h in vector}
    has_vector = set(merged) | set(cosines)
    lexical: dict[str, float] = {}
    for hit in fts:
        strength = _scaled(hit.fts_score, f_low, f_span) * term_coverage(query, hit)
        lexical[hit.id] = strength
        if hit.id in merged:
            merged[hit.id].fts_score = hit.fts_score
        else:
            hit.vector_score = max(0.0, cosines.get(hit.id, 0.0))
            merged[hit.id] = hit
    for hit in merged.values():
        semantic = _scaled(hit.vector_score, v_low, v_span) if hit.id in has_vector else 0.0
        hit.score = alpha * semantic + (1.0 - alpha) * lexical.get(hit.id, 0.0)
    kept = [h for h in merged.values() if h.score >= NOISE_FLOOR]
    return sorted(kept, key=lambda h: (-h.score, h.id))[:limit]


def query_cosines(
    conn: Connection, hits: Sequence[Hit], query_vector: Sequence[float]
) -> dict[str, float]:
    """The cosine of each hit's stored embedding with the query's, by id (hits without one are
    left out): the vector score of a lexical candidate the vector leg did not return."""
    query = np.asarray(query_vector, dtype=np.float64)
    norm = float(np.linalg.norm(query))
    found: dict[str, float] = {}
    for row_id, stored in hit_vectors(conn, hits).items():
        vector = np.asarray(stored, dtype=np.float64)
        length = float(np.linalg.norm(vector)) * norm
        if length > 0 and len(vector) == len(query):
            found[row_id] = float(vector @ query) / length
    return found
