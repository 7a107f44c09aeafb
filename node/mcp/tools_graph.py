"""The MCP tools over the entity graph, the wiki and the node itself: graph_add, graph_list,
graph_query, wiki_compile, stats, sync_status (node/mcp/server.py registers them;
docs/MCP.md documents them).
"""

from __future__ import annotations

from typing import Literal

from msgspec import Struct

from feral.node.answers import EntityRow, FactRow, StatsAnswer
from feral.node.api.graph_routes import EntityRequest, GraphQuery
from feral.node.links.answers_sync import StatusAnswer
from feral.node.links.status import sync_status
from feral.node.node import Node
from feral.node.recall import graph
from feral.node.recall.answers_graph import GraphQueryAnswer
from feral.node.settings.limits import Text
from feral.sync.errors import InvalidInput

from .answers import EntitiesListed, WikiCompiled
from .common import IDEMPOTENT, READ_ONLY, WRITES, Server, add_tool, given

__all__ = ["GRAPH_TOOLS", "add_graph_tools"]

GRAPH_TOOLS = ("graph_add", "graph_list", "graph_query", "wiki_compile", "stats", "sync_status")


class EntityType(Struct, frozen=True, forbid_unknown_fields=True):
    type: Text | None = None


def add_graph_tools(server: Server, node: Node) -> None:
    """Every tool of this module, on ``server``."""
    _add_graph_writes(server, node)
    _add_graph_reads(server, node)
    _add_node_tools(server, node)


class GraphRelation(Struct, frozen=True, forbid_unknown_fields=True):
    """Two entities (``TYPE:NAME``) and the relation between them."""

    source: Text
    relation: Text
    target: Text


async def _graph_add(
    node: Node, entity: dict[str, str | None], relation: dict[str, str | None]
) -> EntityRow | FactRow:
    """An entity named, or a relation remembered: whichever the arguments give."""
    named = {k: v for k, v in entity.items() if v is not None}
    related = {k: v for k, v in relation.items() if v is not None}
    if named and related:
        raise InvalidInput("give type and name, or source, relation and target, not both")
    if related:
        if len(related) < len(relation):
            raise InvalidInput("source, relation and target go together")
        ends = given(GraphRelation, **related)
        return await graph.relate(node, ends.source, ends.relation, ends.target)
    if len(named) < len(entity):
        raise InvalidInput("give type and name, or source, relation and target")
    body = given(EntityRequest, **named)
    return await graph.add_entity(node, body.type, body.name)


def _add_graph_writes(server: Server, node: Node) -> None:
    async def graph_add(
        type: str | None = None,
        name: str | None = None,
        source: str | None = None,
        relation: str | None = None,
        target: str | None = None,
    ) -> EntityRow | FactRow:
        """Name an entity (`type`, one word such as person or place, and `name`), or relate
        two (`source` and `target` as TYPE:NAME, e.g. person:Ana, and a `relation` such as
        lives_in): both entities are named and the fact `source relation target` remembered."""
        entity = {"type": type, "name": name}
        ends = {"source": source, "relation": relation, "target": target}
        return await _graph_add(node, entity, ends)

    async def wiki_compile() -> WikiCompiled:
        """Rebuild the wiki's pages (the feral://wiki resources) from the live memories: one
        page per topic; pages with conflicting facts say they need review."""
        return {"pages": await node.compile_wiki()}

    add_tool(server, graph_add, WRITES)
    add_tool(server, wiki_compile, IDEMPOTENT)


def _add_graph_reads(server: Server, node: Node) -> None:
    async def graph_list(type: str | None = None) -> EntitiesListed:
        """The entities (of one `type`, if given) with their attributes and conflicts."""
        body = given(EntityType, type=type)
        return {"entities": await graph.list_graph(node, body.type)}

    async def graph_query(
        start: str,
        relations: list[str] | None = None,
        direction: Literal["outbound", "inbound", "both"] | None = None,
        hops: int | None = None,
        limit: int | None = None,
    ) -> GraphQueryAnswer:
        """Walk the entity graph from `start` (TYPE:NAME), following `relations` (all if
        none), `direction` outbound, inbound or both, up to `hops` steps."""
        body = given(GraphQuery, start=start, relations=relations, direction=direction,
                     hops=hops, limit=limit)  # fmt: skip
        return await graph.query_graph(
            node, body.start, relations=body.relations, direction=body.direction,
            hops=body.hops, limit=body.limit,
        )  # fmt: skip

    add_tool(server, graph_list, READ_ONLY)
    add_tool(server, graph_query, READ_ONLY)


def _add_node_tools(server: Server, node: Node) -> None:
    async def stats() -> StatsAnswer:
        """How many memories of each tier, the node id, whether vector search is on."""
        return await node.stats()

    async def sync_status_() -> StatusAnswer:
        """Each paired peer: linked or not, how far behind, the last error."""
        return await sync_status(node)

    add_tool(server, stats, READ_ONLY)
    add_tool(server, sync_status_, READ_ONLY)
