"""A hybrid search's candidates: both legs fused, the cues, the turns beside the best hits.

Every stage keeps in each hit's ``parts`` what it found (storage/search/fusion.py,
neighbours.py), so that the candidates can be ordered by their fused score or by the reranker
(storage/search/rerank.py), which weighs those parts; the search (node/recall/search.py) and the
benchmark that fits the reranker (benchmarks/rerank_fit.py) read the same candidates here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from feral.storage.db.connection import Connection

from . import fusion, query as legs
from .neighbours import NEIGHBOUR_SOURCES, TURNS_BEFORE, sitting_cue, with_neighbours
from .rerank import is_turn

if TYPE_CHECKING:
    from feral.storage.vectors.vector_index import Context, VectorIndex

__all__ = ["hybrid_candidates"]


def hybrid_candidates(
    conn: Connection,
    query: str,
    vector: bytes,
    alpha: float,
    pool: int,
    index: VectorIndex | None = None,
    context: Context | None = TURNS_BEFORE,
) -> list[legs.Hit]:
    """Every candidate of a hybrid search for ``query`` (its embedding ``vector``), best first
    by the fused score with its cues, none cut: ``pool`` from each leg, fused with ``alpha``
    (a lexical candidate the vector leg did not return keeps its own cosine), the cues for
    questions that ask when or name a speaker, the turns beside the best hits (a remembered
    chat turn with its cosine, for the reranker) and the sittings they share. Each turn's
    cosine takes in the turn said before it as ``context`` says (``None``: its own alone);
    without ``index`` the vectors are read once for the whole search."""
    from feral.storage.vectors.vector_index import VectorIndex  # numpy: when a search runs

    index = index if index is not None else VectorIndex()
    fts = legs.search_fts(conn, query, pool, coverage=True)
    nearest = legs.search_vector(conn, vector, pool, index, context)
    waiting = legs.still_queued(conn, fts)
    returned = {hit.id for hit in nearest}
    lexical_only = [h for h in fts if h.id not in returned]
    cosines = legs.cosines_of(conn, vector, lexical_only, index, context)
    every = len(fts) + len(nearest)  # the cues below may lift a candidate from below the first k
    fused = fusion.fuse(query, fts, nearest, alpha, every, pool, waiting, cosines=cosines)
    cued = fusion.speaker_cue(query, fusion.temporal_cue(query, fused))
    every_neighbour = len(cued) + 2 * NEIGHBOUR_SOURCES  # two beside each lender, none cut
    widened = with_neighbours(conn, cued, every_neighbour)
    joined = [h for h in widened if "cosine" not in h.parts and is_turn(h)]
    for hit_id, cosine in legs.cosines_of(conn, vector, joined, index, context).items():
        next(h for h in joined if h.id == hit_id).parts["cosine"] = cosine
    return sitting_cue(widened, len(widened))
