"""The conflicts' routes in the API's style; node/api/schema.py documents them.

- ``GET /api/memory/conflicts[?all=true]``: the records, as ``feral memory conflicts --json``
- ``POST /api/memory/conflicts/{id}/resolve``  ``{"keep": "HLC:ORIGIN"}`` (``feral memory
  resolve ID --keep VERSION``): the resolved record

Errors are the API's (node/api/routes.py): 400 a body that is not JSON, 422 a missing or
invalid field, 404 no open conflict with that id or a version that is not one of its two.
"""

from __future__ import annotations

import msgspec
from starlette.requests import Request
from starlette.routing import BaseRoute, Route

from feral.node.curation import conflicts
from feral.storage.absorb.conflicts import ConflictRow

from ..node import Node
from .bodies import fit, read_json
from .endpoints import Wrap
from .json_shapes import JsonObject

__all__ = ["ConflictApi", "ConflictsQuery", "ResolveRequest", "conflict_schemas"]

"""node/api/routes.py's ``_endpoint``: a handler answered as JSON, failures as JSON errors."""


class ResolveRequest(msgspec.Struct, forbid_unknown_fields=True):
    """Which side of a conflict to keep: one of its two versions, as listed."""

    keep: str


class ConflictsQuery(msgspec.Struct, forbid_unknown_fields=True):
    """``all``: resolved conflicts too."""

    all: bool = False


class ConflictApi:
    """The conflicts' handlers for one node."""

    def __init__(self, node: Node) -> None:
        self.node = node

    def routes(self, endpoint: Wrap) -> list[BaseRoute]:
        return [
            Route("/api/memory/conflicts", endpoint(self.listing), methods=["GET"]),
            Route(
                "/api/memory/conflicts/{conflict}/resolve", endpoint(self.resolve), methods=["POST"]
            ),
        ]

    async def listing(self, request: Request) -> list[ConflictRow]:
        query = fit(dict(request.query_params), ConflictsQuery, from_strings=True, top="the query")
        return await conflicts.list_conflicts(self.node, include_resolved=query.all)

    async def resolve(self, request: Request) -> ConflictRow:
        body = await read_json(request, ResolveRequest)
        return await conflicts.resolve(self.node, str(request.path_params["conflict"]), body.keep)


def conflict_schemas(ref: str) -> JsonObject:
    """The request structure's JSON Schema, as msgspec makes it, for ``components``."""
    _, components = msgspec.json.schema_components((ResolveRequest,), ref_template=ref)
    return components
