"""Searching a node: settings' defaults, the no-model fallbacks, the legs, the MMR rerank.

:class:`SearchRequest` is the one declaration of a search's options: the body of ``POST
/api/memory/search`` is converted into it (node/api/routes.py), the OpenAPI document shows its
schema (node/api/schema.py), and ``feral memory search`` builds its click options from the same
limits (node/settings/limits.py). By the time a request reaches :func:`run_search` its values have
been checked, so nothing here checks them again; what is left is what this node can do as
configured. The ranking itself is storage's: BM25, cosine and MMR in storage/search/query.py, the
blend of the two legs and the cue for questions that ask when in storage/search/fusion.py, the turns
beside the best hybrid hits in storage/search/neighbours.py, the reordering of remembered chat
turns in storage/search/rerank.py.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypedDict, cast

from msgspec import Struct

from feral.node.answers import SearchAnswer, SearchHit
from feral.node.settings.config import SearchSettings
from feral.node.settings.limits import Fraction, MinScore, Query, Strategy, StrategyName, TopK
from feral.node.settings.scopes import Scope
from feral.storage.db.connection import Connection
from feral.storage.search import fusion, query as ranking
from feral.storage.search.hybrid import hybrid_candidates
from feral.storage.search.neighbours import TURNS_BEFORE
from feral.storage.search.ranking import Weights, weigh
from feral.storage.search.rerank import rerank
from feral.storage.store import Store
from feral.storage.vectors.vectors import Embedder, pack_vector, queue_waiting
from feral.sync.errors import NotAvailable

from .graph_search import follow_graph

if TYPE_CHECKING:  # the index holds numpy, which commands that do not search never import
    from feral.storage.vectors.vector_index import VectorIndex

__all__ = ["SearchOptions", "SearchRequest", "SearchResult", "run_search"]

NO_MODEL = "no embedding model is configured"
NOT_EMBEDDED = (
    "some rows wait to be embedded: vector search finds them once they are, "
    "fts and hybrid find them by their words now"
)


class SearchRequest(Struct, frozen=True, forbid_unknown_fields=True):
    """What to search for; an option left ``None`` takes its default from settings."""

    query: Query
    top_k: TopK | None = None
    strategy: StrategyName | None = None
    alpha: Fraction | None = None
    """The vector weight in hybrid scoring: ``alpha*vector + (1-alpha)*fts``, each leg
    normalised over its candidate pool (storage/search/fusion.py). Not given, it is the
    settings' ``search.alpha``, lowered for a long query (:func:`~feral.storage.search.fusion.
    alpha_for`); given, it is used as it is."""
    mmr: bool | None = None
    """Rerank for diversity; asked for with no model it is an error, from settings it is skipped."""
    mmr_lambda: Fraction | None = None
    """Relevance weight in the MMR rerank: ``lambda*rel - (1-lambda)*max_sim_to_selected``."""
    min_score: MinScore | None = None
    """Drop hits whose final score (relevance x temporal x importance) is below this."""
    scope: Scope | None = None
    """Only memories of this scope (``user``, ``agent:NAME``, ``session:ID``); ``None``: all."""


class SearchOptions(TypedDict, total=False):
    """:class:`SearchRequest`'s options as keywords (``feral.Memory.search``), each optional."""

    top_k: int
    strategy: Strategy
    alpha: float
    mmr: bool
    mmr_lambda: float
    min_score: float
    scope: str


@dataclass(frozen=True)
class SearchResult:
    """What a search returns: hits in the shape of DESIGN §6, plus the timing."""

    results: list[SearchHit]
    total: int
    query_time_ms: float
    strategy: Strategy
    mmr: bool = False
    """Whether the results were reranked by MMR."""
    notes: tuple[str, ...] = ()
    """What the search could not do as asked, and why (e.g. no embedding model)."""

    def as_dict(self) -> SearchAnswer:
        """The JSON shape of ``feral memory search --json`` and ``POST /api/memory/search``."""
        return {
            "results": self.results,
            "total": self.total,
            "query_time_ms": self.query_time_ms,
            "strategy": self.strategy,
            "mmr": self.mmr,
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class _Plan:
    """A request with every default filled in and the legs this node can run."""

    query: str
    k: int
    strategy: Strategy
    alpha: float
    rerank: bool
    diversity: float
    notes: tuple[str, ...]
    weights: Weights
    min_score: float


def _plan(
    request: SearchRequest, defaults: SearchSettings, embedder: Embedder | None, now_ms: int
) -> _Plan:
    """Fill in defaults; with no embedder the vector leg is off (DESIGN §2: never blend noise).

    Raises:
        NotAvailable: ``vector``, or ``mmr`` asked for explicitly, with no embedder.
    """
    strategy = request.strategy or defaults.strategy
    rerank = request.mmr if request.mmr is not None else defaults.mmr
    notes: list[str] = []
    if embedder is None:
        if strategy == "vector":
            raise NotAvailable(f"vector search is off: {NO_MODEL}")
        if request.mmr:
            raise NotAvailable(f"MMR needs embeddings: {NO_MODEL}")
        if strategy == "hybrid":
            notes.append(f"hybrid fell back to fts: {NO_MODEL}")
        if rerank:
            notes.append(f"mmr skipped: {NO_MODEL}")
        strategy, rerank = "fts", False
    return _Plan(
        query=request.query,
        k=request.top_k if request.top_k is not None else defaults.top_k,
        strategy=strategy,
        alpha=(
            request.alpha
            if request.alpha is not None
            else fusion.alpha_for(request.query, defaults.alpha)
        ),
        rerank=rerank,
        diversity=request.mmr_lambda if request.mmr_lambda is not None else defaults.mmr_lambda,
        notes=tuple(notes),
        weights=Weights(defaults.decay_per_day, now_ms, request.scope),
        min_score=request.min_score if request.min_score is not None else defaults.min_score,
    )


async def run_search(
    store: Store,
    embedder: Embedder | None,
    defaults: SearchSettings,
    request: SearchRequest,
    index: VectorIndex | None = None,
    now_ms: int | None = None,
) -> SearchResult:
    """Search episodes and facts as ``request`` asks, with ``defaults`` for what it leaves out.

    ``index`` is the vectors the node holds in memory; without it every vector is read afresh.
    ``now_ms`` is the clock that ages memories (the system clock when left out).

    Raises:
        NotAvailable: the request needs an embedding model and this node has none.
    """
    started = time.perf_counter()
    now = now_ms if now_ms is not None else time.time_ns() // 1_000_000
    plan = _plan(request, defaults, embedder, now)
    hits = await store.read(_search, plan, embedder, index)
    notes = plan.notes
    if plan.strategy == "vector" and await store.read(queue_waiting):
        notes += (NOT_EMBEDDED,)
    elapsed = (time.perf_counter() - started) * 1000
    return SearchResult(
        [cast(SearchHit, h.as_dict()) for h in hits],
        len(hits),
        round(elapsed, 3),
        plan.strategy,
        plan.rerank,
        notes,
    )


def _search(
    conn: Connection, plan: _Plan, embedder: Embedder | None, index: VectorIndex | None
) -> list[ranking.Hit]:
    """Inside one read: a query naming a relation path follows the graph first
    (node/recall/graph_search.py); any other is ranked as usual."""
    followed = follow_graph(
        conn,
        plan.query,
        plan.k,
        lambda q: _plain(conn, replace(plan, query=q), embedder, index),
        scope=plan.weights.scope,
        keep=lambda hits: _weighed_in_order(conn, hits, plan),
    )
    return followed if followed is not None else _plain(conn, plan, embedder, index)


def _weighed_in_order(conn: Connection, hits: list[ranking.Hit], plan: _Plan) -> list[ranking.Hit]:
    """The graph's hits weighed as :func:`_plain` weighs its own (scope, ``min_score``), in
    the order the graph gave them: a path's answers come first whatever their scores."""
    order = {hit.id: i for i, hit in enumerate(hits)}
    kept = [h for h in weigh(conn, hits, plan.weights) if h.score >= plan.min_score]
    return sorted(kept, key=lambda hit: order[hit.id])


def _plain(
    conn: Connection, plan: _Plan, embedder: Embedder | None, index: VectorIndex | None
) -> list[ranking.Hit]:
    """The ranked hits, weighed by time and importance (storage/search/ranking.py), then reranked by
    MMR when the plan says so.

    The legs return at least :data:`~feral.storage.search.fusion.FUSION_POOL` candidates, so a fresh
    or boosted memory just below the page can rise into it; with every weight 1 the first
    ``k`` are the legs' own first ``k``.
    """
    wanted = ranking.mmr_pool_size(plan.k) if plan.rerank else plan.k
    candidates = _ranked(conn, plan, fusion.fusion_pool_size(wanted), embedder, index)
    hits = [h for h in weigh(conn, candidates, plan.weights) if h.score >= plan.min_score]
    if not plan.rerank:
        return hits[: plan.k]
    hits = hits[:wanted]
    return ranking.mmr_rerank(hits, ranking.hit_vectors(conn, hits), plan.diversity, plan.k)


def _ranked(
    conn: Connection,
    plan: _Plan,
    k: int,
    embedder: Embedder | None,
    index: VectorIndex | None,
) -> list[ranking.Hit]:
    if plan.strategy == "fts":
        fts = ranking.search_fts(conn, plan.query, k)
        for hit in fts:
            hit.score = hit.fts_score
        return fts
    assert embedder is not None  # _plan turned the vector leg off without one
    vector = pack_vector(embedder.embed([plan.query])[0], embedder.dim)
    if plan.strategy == "vector":
        nearest = ranking.search_vector(conn, vector, k, index, TURNS_BEFORE)
        for hit in nearest:
            hit.score = hit.vector_score
        return nearest
    return _hybrid(conn, plan, k, vector, index)


def _hybrid(
    conn: Connection, plan: _Plan, k: int, vector: bytes, index: VectorIndex | None
) -> list[ranking.Hit]:
    """Both legs fused, the cues, the turns beside the best hits and the sittings they share
    (storage/search/hybrid.py), remembered chat turns reordered by the reranker
    (storage/search/rerank.py); the first ``k``."""
    pool = fusion.fusion_pool_size(k)
    return rerank(
        plan.query, hybrid_candidates(conn, plan.query, vector, plan.alpha, pool, index), k
    )
