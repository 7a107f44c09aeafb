"""The MCP tools over memories themselves: remember, search, get, list, forget, restore, boost,
link (node/mcp/server.py registers them; docs/MCP.md documents them).

Arguments have the names of the HTTP API's bodies (node/api/) and are checked by the same
structures, so the limits and the answers are the API's.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from feral.node.answers import (
    AbsorbedAnswer,
    EdgeRow,
    EpisodeRow,
    FactRow,
    Followed,
    MetaAnswer,
    SearchAnswer,
)
from feral.node.api.bodies import RememberRequest
from feral.node.api.curation import ArchiveRequest, BoostRequest, ListQuery
from feral.node.curation import actions as curation
from feral.node.curation.memory_graph import Follow, follow as read_followed, link
from feral.node.node import Node
from feral.node.recall.search import SearchRequest
from feral.node.settings.limits import Strategy

from .answers import MemoriesListed
from .common import DESTRUCTIVE, IDEMPOTENT, READ_ONLY, WRITES, Server, add_tool, given

__all__ = ["MEMORY_TOOLS", "add_memory_tools"]

MEMORY_TOOLS = ("remember", "search", "get", "list", "forget", "restore", "boost", "link")


def add_memory_tools(server: Server, node: Node) -> None:
    """Every tool of this module, on ``server``."""
    _add_writing_tools(server, node)
    _add_reading_tools(server, node)
    _add_curation_tools(server, node)


def _add_writing_tools(server: Server, node: Node) -> None:
    async def remember(
        fact: str | None = None,
        subject: str | None = None,
        predicate: str | None = None,
        object: str | None = None,
        scope: str | None = None,
        keep_both: bool = False,
    ) -> AbsorbedAnswer:
        """Remember a fact: a sentence as `fact`, or `subject`, `predicate` and `object`.
        It is checked for secrets, classified against what is stored (duplicate, update,
        contradiction, new) and linked; the answer says which, and names any row it was
        merged into (`merged_into`) or archived (`archived_rows`). `keep_both` writes it
        beside such a row instead. A sentence of several clauses is remembered clause by
        clause (`clauses`)."""
        body = given(RememberRequest, fact=fact, subject=subject, predicate=predicate,
                     object=object, scope=scope, keep_both=keep_both)  # fmt: skip
        triple = body.triple()
        text = None if triple is not None else str(body.fact).strip()
        absorbed = await node.absorb(text, triple, body.scope, keep_both=body.keep_both)
        return absorbed.as_dict()

    async def search(
        query: str,
        top_k: int | None = None,
        strategy: Strategy | None = None,
        alpha: float | None = None,
        mmr: bool | None = None,
        mmr_lambda: float | None = None,
        min_score: float | None = None,
        scope: str | None = None,
    ) -> SearchAnswer:
        """Search the memories (facts and episodes) by meaning and words; options left out
        take the node's settings. `strategy`: hybrid, vector or fts."""
        body = given(SearchRequest, query=query, top_k=top_k, strategy=strategy, alpha=alpha,
                     mmr=mmr, mmr_lambda=mmr_lambda, min_score=min_score, scope=scope)  # fmt: skip
        return (await node.search(**msgspec.structs.asdict(body))).as_dict()

    add_tool(server, remember, WRITES)
    add_tool(server, search, READ_ONLY)


def _add_reading_tools(server: Server, node: Node) -> None:
    async def get(id: str, follow: Follow = "none") -> Followed:
        """One memory by id; `follow`: none, edges (its links) or full_history (every version
        it superseded)."""
        return await read_followed(node, given(ArchiveRequest, id=id).id, follow)

    async def list_(
        tier: Literal["semantic", "episodic"] | None = None, scope: str | None = None,
        status: Literal["active", "archived", "superseded", "all"] | None = None,
        limit: int | None = None,
    ) -> MemoriesListed:  # fmt: skip
        """The newest memories, filtered by tier (semantic: facts; episodic: episodes), scope
        and status (active, archived, superseded, all)."""
        query = given(ListQuery, tier=tier, scope=scope, status=status, limit=limit)
        rows = await curation.list_memories(
            node, tier=query.tier, scope=query.scope, status=query.status, limit=query.limit
        )
        return {"memories": rows}

    add_tool(server, get, READ_ONLY)
    add_tool(server, list_, READ_ONLY)


def _add_curation_tools(server: Server, node: Node) -> None:
    async def forget(id: str) -> FactRow | EpisodeRow:
        """Archive a memory: it leaves search and lists of active memories (`restore` undoes
        it)."""
        return await node.set_archived(given(ArchiveRequest, id=id).id, True)

    async def restore(id: str) -> FactRow | EpisodeRow:
        """Bring an archived memory back."""
        return await node.set_archived(given(ArchiveRequest, id=id).id, False)

    async def boost(id: str, importance: float, reason: str = "") -> MetaAnswer:
        """Set a memory's importance multiplier (above 0, at most 10) and say why."""
        body = given(BoostRequest, id=id, importance=importance, reason=reason)
        return await curation.boost(node, body.id, body.importance, body.reason)

    async def link_(from_id: str, to_id: str, type: str, note: str = "") -> EdgeRow:
        """Link two memories with a typed edge (supersedes, contradicts, related_to, ...)."""
        ends = (given(ArchiveRequest, id=from_id).id, given(ArchiveRequest, id=to_id).id)
        return await link(node, ends[0], ends[1], type, note)

    add_tool(server, forget, DESTRUCTIVE)
    add_tool(server, restore, IDEMPOTENT)
    add_tool(server, boost, IDEMPOTENT)
    add_tool(server, link_, IDEMPOTENT)
