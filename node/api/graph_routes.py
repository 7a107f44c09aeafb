"""The graph's routes (``/api/graph/...``) in the API's style; node/api/schema.py documents them.

- ``POST /api/graph/entities``   ``{"type", "name"}``: name an entity (``feral graph add``)
- ``GET  /api/graph/entities``   ``?type=T``: the entities with attributes (``feral graph list``)
- ``POST /api/graph/relations``  ``{"from", "relation", "to"}`` with ``TYPE:NAME`` ends
  (``feral graph add --relation``): the stored fact
- ``POST /api/graph/query``      ``{"start", "relations", "direction", "hops", "limit"}``
  (``feral graph query``): ``{"start", "results"}``

Answers are what the CLI prints with ``--json``; errors are the API's (node/api/routes.py): 422
for a bad type, name, reference or option, 404 for a start that names no entity.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta, Struct
from starlette.requests import Request
from starlette.routing import BaseRoute, Route

from feral.node.recall import graph
from feral.node.recall.answers_graph import GraphEntity, GraphQueryAnswer
from feral.node.settings.limits import Text
from feral.storage.db.rows import FactRow
from feral.storage.memory.graph import MAX_HOPS, MAX_RESULTS

from ..answers import EntityRow
from ..node import Node
from .bodies import fit, read_json
from .endpoints import Wrap
from .json_shapes import JsonObject
from .query_check import reads_query

__all__ = ["GRAPH_STRUCTURES", "GraphApi", "graph_schemas"]

Hops = Annotated[int, Meta(ge=1, le=MAX_HOPS)]
Limit = Annotated[int, Meta(ge=1, le=MAX_RESULTS)]


class EntityRequest(Struct, frozen=True, forbid_unknown_fields=True):
    """An entity to name: its type (one word) and its name."""

    type: Text
    name: Text


class RelationRequest(Struct, frozen=True, forbid_unknown_fields=True):
    """A relation between two entities, each ``TYPE:NAME``; stored as the fact FROM REL TO."""

    from_: Text = msgspec.field(name="from")
    relation: Text = msgspec.field()
    to: Text = msgspec.field()


class GraphQuery(Struct, frozen=True, forbid_unknown_fields=True):
    """A traversal from ``start`` (``TYPE:NAME``), following ``relations`` (all if empty)."""

    start: Text
    relations: list[Text] = msgspec.field(default_factory=list)
    direction: Literal["outbound", "inbound", "both"] = "outbound"
    hops: Hops = 1
    limit: Limit = MAX_RESULTS


class EntitiesQuery(Struct, frozen=True, forbid_unknown_fields=True):
    """The query parameters of ``GET /api/graph/entities``; others are refused."""

    type: str | None = None
    """Only entities of this type."""


"""node/api/routes.py's ``_endpoint``: a handler answered as JSON, failures as JSON errors."""

GRAPH_STRUCTURES: tuple[type[Struct], ...] = (EntityRequest, RelationRequest, GraphQuery)


class GraphApi:
    """The graph's handlers for one node; ``endpoint`` wraps each in the API's error answers."""

    def __init__(self, node: Node) -> None:
        self.node = node

    def routes(self, endpoint: Wrap) -> list[BaseRoute]:
        return [
            Route("/api/graph/entities", endpoint(self.add_entity), methods=["POST"]),
            Route("/api/graph/entities", endpoint(self.entities), methods=["GET"]),
            Route("/api/graph/relations", endpoint(self.relate), methods=["POST"]),
            Route("/api/graph/query", endpoint(self.query), methods=["POST"]),
        ]

    async def add_entity(self, request: Request) -> EntityRow:
        body = await read_json(request, EntityRequest)
        return await graph.add_entity(self.node, body.type, body.name)

    @reads_query
    async def entities(self, request: Request) -> list[GraphEntity]:
        query = fit(dict(request.query_params), EntitiesQuery, from_strings=True, top="the query")
        return await graph.list_graph(self.node, query.type)

    async def relate(self, request: Request) -> FactRow:
        body = await read_json(request, RelationRequest)
        return await graph.relate(self.node, body.from_, body.relation, body.to)

    async def query(self, request: Request) -> GraphQueryAnswer:
        body = await read_json(request, GraphQuery)
        return await graph.query_graph(
            self.node,
            body.start,
            relations=body.relations,
            direction=body.direction,
            hops=body.hops,
            limit=body.limit,
        )


def graph_schemas(ref: str) -> JsonObject:
    """The request structures' JSON Schemas, as msgspec makes them, for ``components``."""
    _, components = msgspec.json.schema_components(GRAPH_STRUCTURES, ref_template=ref)
    return components
