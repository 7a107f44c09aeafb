"""The ``Node`` users hold: the kernel (node/node_kernel.py) with the features built on it.

The kernel owns the device's identity, settings, clock, store and write path, and tells
subscribers what changed; it imports none of its features. The features (absorb, recall,
curation, the assistant's sessions) take the node through a small protocol (node/kernel.py).
This class, in a room above them, is where the two meet: it subscribes curation to the
kernel's changes when the node is opened (node/curation/upkeep.py), and answers the calls
that run a feature (``absorb``, ``ingest``, ``import_facts``, ``search``, the wiki, ``stats``)
for the CLI, the API, MCP, ``feral.Memory``, the benchmarks and the simulations.

Each feature's module is imported by the method that runs it, not by this module: every
``feral`` command that opens a node imports this file, and one that only reads the store (``sync
status``, ``memory export``) would otherwise load the absorb pipeline, the secret scanner, the
sessions and the search at every start (tests/cli/test_startup.py checks it does not).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING

from feral.node.curation.upkeep import follow_changes
from feral.node.home.home_paths import DATABASE_FILE, default_home
from feral.node.node_kernel import NodeKernel
from feral.storage.db.migrations import Migration
from feral.storage.memory import memories
from feral.storage.vectors.vectors import Embedder
from feral.sync.schema import Schema

if TYPE_CHECKING:
    from feral.node.absorb.absorb_batch import Absorbed as BulkAbsorbed
    from feral.node.absorb.phrases import Triple
    from feral.node.absorb.pipeline import Absorbed, Said
    from feral.node.answers import StatsAnswer, WikiTopic
    from feral.node.assistant.sessions import IngestResult, SessionMemory
    from feral.node.assistant.working_memory import Message
    from feral.node.recall.search import SearchResult
    from feral.node.settings.limits import Strategy

__all__ = ["DATABASE_FILE", "IMPORT_BATCH", "Node", "SearchResult", "default_home"]

IMPORT_BATCH = 5_000


class Node(NodeKernel):
    """One device's memory store. Create with :meth:`open`; always :meth:`close`."""

    @classmethod
    async def open(
        cls,
        home: Path,
        *,
        now_ms: Callable[[], int] | None = None,
        embedder: Embedder | None = None,
        check: bool = False,
        schema: Schema | None = None,
        migrations: tuple[Migration, ...] = (),
    ) -> Node:
        """Open the node in ``home`` (:meth:`NodeKernel.open`), with curation following its
        changes: conflicts recorded as a peer's rows arrive, derived files redone when rows are
        erased (node/curation/upkeep.py)."""
        node = await super().open(home, now_ms=now_ms, embedder=embedder, check=check,
                                  schema=schema, migrations=migrations)  # fmt: skip
        follow_changes(node)
        return node

    # -- absorb and the assistant's sessions -------------------------------------------------

    async def absorb(
        self,
        text: str | Said | None = None,
        triple: Triple | None = None,
        scope: str | None = None,
        *,
        keep_both: bool = False,
    ) -> Absorbed:
        """Remember through the absorb pipeline (node/absorb/pipeline.py): scanned, classified,
        linked; ``keep_both`` writes what would be merged or superseded beside it instead. ``text``
        may be what was said already checked (:class:`Said`: a command checks it before it opens the
        node, node/absorb/pipeline.py's ``absorbing``)."""
        from feral.node.absorb.pipeline import Said, absorb

        said = text if isinstance(text, Said) else Said.of(text, triple)
        return await absorb(self, said, scope=scope, keep=keep_both)

    async def remember_extracted(self, episode_id: str, groups: list[list[Triple]]) -> int:
        """Remember facts taken from an episode's messages (node/assistant/ingest_facts.py), through
        the absorb pipeline (node/absorb/absorb_batch.py)."""
        from feral.node.absorb.absorb_batch import absorb_groups

        return await absorb_groups(self, episode_id, groups)

    def open_sessions(self) -> SessionMemory:
        """Working memory for sessions (DESIGN §2): in this process's RAM, episodes replicate."""
        from feral.node.assistant.node_sessions import open_sessions

        return open_sessions(self)

    async def ingest(
        self, messages: Iterable[Message], progress: Callable[[int], None] | None = None
    ) -> IngestResult:
        """Stream a transcript through fresh working memory (node/assistant/node_sessions.py);
        every remainder is flushed, and the facts users state become facts of the episodes they
        are in. A message holding a secret is refused when reached (the CLI screens every line
        first)."""
        from feral.node.assistant.node_sessions import ingest_transcript

        return await ingest_transcript(self, messages, progress)

    async def import_facts(
        self,
        triples: Iterable[tuple[str, str, str]],
        progress: Callable[[int], None] | None = None,
        batch: int = IMPORT_BATCH,
        *,
        classify: bool = True,
    ) -> int:
        """Remember many facts, ``batch`` per check; ``progress`` gets each written chunk's size.
        A batch holding a secret is refused whole (the CLI screens every line first). Facts go
        through the absorb pipeline (node/absorb/absorb_batch.py); ``classify=False`` writes them as
        given (the facts of an export: classified where they were made). Returns how many
        facts were written."""
        if classify:
            return (await self.absorb_facts(triples, progress, batch)).written
        from feral.node.secrets.scan import refuse_triples
        from feral.node.write_turns import WriteTurns

        written = 0
        turns = WriteTurns(self.home)
        for number, chunk in enumerate(_chunks(triples, batch)):
            refuse_triples(chunk, first=number * batch + 1)
            write = self.write(memories.import_facts, chunk, now_ms=self.now_ms())
            written += await turns.run(write)  # a serve beside the bulk keeps its turns
            await self.after_write()
            if progress:
                progress(len(chunk))
        return written

    async def absorb_facts(
        self,
        triples: Iterable[tuple[str, str, str]],
        progress: Callable[[int], None] | None = None,
        batch: int = IMPORT_BATCH,
        *,
        keep_both: bool = False,
    ) -> BulkAbsorbed:
        """``import_facts`` through the absorb pipeline, answering what it did to each fact:
        the counts, and a notice for each fact merged or superseding (``keep_both``: written
        beside instead)."""
        from feral.node.absorb.absorb_batch import Absorbed as BulkAbsorbed, absorb_many
        from feral.node.secrets.scan import refuse_triples

        result = BulkAbsorbed()
        for number, chunk in enumerate(_chunks(triples, batch)):
            refuse_triples(chunk, first=number * batch + 1)
            result.extend(await absorb_many(self, chunk, progress=progress, keep=keep_both))
        return result

    # -- reads through recall and curation ---------------------------------------------------

    async def stats(self) -> StatsAnswer:
        """The tiers' counts, vectors and conflicts (node/curation/actions.py)."""
        from feral.node.curation.actions import memory_stats

        return await memory_stats(self)

    async def compile_wiki(self) -> list[WikiTopic]:
        """Rebuild every page from the live rows: ``[{"topic", "path", "sources", ...}]``."""
        from feral.node.curation.upkeep import compile_wiki

        return await compile_wiki(self)

    async def wiki_topics(self) -> list[WikiTopic]:
        """The compiled pages: ``[{"topic", "path", "sources", "needs_review"}]``."""
        from feral.node.curation.wiki import list_pages

        return list_pages(self.home)

    async def wiki_page(self, topic: str) -> str:
        """The Markdown of ``topic``'s page (NotFoundError if none; PathRefused for a path)."""
        from feral.node.curation.wiki import read_page

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
        from feral.node.recall.access import note_retrieved
        from feral.node.recall.search import SearchRequest, run_search

        request = SearchRequest(query, top_k, strategy, alpha, mmr, mmr_lambda, min_score, scope)
        now = self.now_ms()
        result = await run_search(
            self.store, self.embedder, self.settings.search, request, self.embedding.index, now
        )
        await note_retrieved(self.store, result.results, now)  # local: access strength
        return result


def _chunks(items: Iterable[Triple], size: int) -> Iterator[list[Triple]]:
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk


def __getattr__(name: str) -> object:
    """``SearchResult``, re-exported for callers of :meth:`Node.search`, imported when asked for:
    opening a node for a command that does not search need not import recall."""
    if name == "SearchResult":
        from feral.node.recall.search import SearchResult

        return SearchResult
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
