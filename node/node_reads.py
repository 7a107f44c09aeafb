"""The reads of the ``Node`` facade: rows, stats, exports, the wiki and search.

Kept apart from node/node.py, which holds what writes (the clock, the write path, the links to
tell): everything here only reads the store, or derives files from it (the wiki's pages).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import cast

from feral.node.curation.memory_graph import conflicting_values
from feral.node.curation.wiki import build_pages, list_pages, read_page, write_pages
from feral.node.home.identity import Identity
from feral.node.recall.access import note_retrieved
from feral.node.recall.search import SearchRequest, SearchResult, run_search
from feral.node.settings.config import Settings
from feral.node.settings.limits import Strategy
from feral.storage.absorb.conflicts import conflict_count, list_conflicts
from feral.storage.db.rows import EpisodeRow
from feral.storage.memory import export, memories, stats
from feral.storage.store import Store
from feral.storage.vectors.vectors import Embedder
from feral.sync.schema import EPISODES, FACTS

from .answers import MemoryRow, StatsAnswer, WikiTopic
from .embedding import Embedding

__all__ = ["NodeReads"]


class NodeReads:
    """What a :class:`~feral.node.node.Node` answers without writing a row."""

    home: Path
    identity: Identity
    settings: Settings
    store: Store
    now_ms: Callable[[], int]
    embedder: Embedder | None
    embedding: Embedding

    # -- reads ---------------------------------------------------------------------------------

    async def get(self, row_id: str) -> MemoryRow:
        _, row = await self.store.read(memories.find_row, row_id)
        return cast(MemoryRow, row)

    async def episodes(self, limit: int = 20) -> list[EpisodeRow]:
        return await self.store.read(memories.list_episodes, limit)

    async def stats(self) -> StatsAnswer:
        result = cast(StatsAnswer, await self.store.read(stats.database_stats))
        result["node_id"] = self.identity.node_id
        result["conflicts"] = await self.store.read(conflict_count)  # as ``sync status``
        result["conflicting_values"] = len(await self.store.read(conflicting_values))
        result["vector_search"] = (
            "on"
            if self.embedder is not None
            else 'off: no embedding model is configured (memory.embedder is "none")'
        )
        return result

    async def export_lines(self) -> list[str]:
        return await self.store.read(lambda conn: list(export.export_lines(conn)))

    async def state_digest(self) -> str:
        return await self.store.read(export.state_digest)

    # -- wiki (derived pages in HOME/wiki, node/curation/wiki.py) ----------------------------------

    async def compile_wiki(self) -> list[WikiTopic]:
        """Rebuild every page from the live rows: ``[{"topic", "path", "sources", ...}]``."""
        facts, episodes, races = await self.store.read(
            lambda conn: (
                memories.list_live(conn, FACTS),
                memories.list_live(conn, EPISODES),
                list_conflicts(conn),
            )
        )
        pages = build_pages(facts, episodes, conflicts=races)
        return cast(list[WikiTopic], write_pages(self.home, pages, self.now_ms()))

    async def wiki_topics(self) -> list[WikiTopic]:
        """The compiled pages: ``[{"topic", "path", "sources", "needs_review"}]``."""
        return cast(list[WikiTopic], list_pages(self.home))

    async def wiki_page(self, topic: str) -> str:
        """The Markdown of ``topic``'s page (NotFoundError if none; PathRefused for a path)."""
        return read_page(self.home, topic)

    async def search(
        self,
        query: str,
        *,
        top_k: int | None = None,
        strategy: Strategy | None = None,
        alpha: float | None = None,
        mmr: bool | None = None,
        mmr_lambda: float | None = None,
        min_score: float | None = None,
        scope: str | None = None,
    ) -> SearchResult:
        """Search episodes and facts (node/recall/search.py); options left out come from settings.

        The memories answered are noted as retrieved, on this device only (node/recall/access.py).
        The values are the caller's to check (the CLI's options, the API's
        :class:`~feral.node.recall.search.SearchRequest`): they are not checked again here.
        """
        request = SearchRequest(query, top_k, strategy, alpha, mmr, mmr_lambda, min_score, scope)
        now = self.now_ms()
        result = await run_search(
            self.store, self.embedder, self.settings.search, request, self.embedding.index, now
        )
        await note_retrieved(self.store, result.results, now)  # local: access strength
        return result
