"""The API's handlers: FERAL's paths, served by the same Starlette app (and port) as ``/sync``.

Routes (bodies and answers are JSON; the OpenAPI document, node/api/schema.py, is served at
``GET /openapi.json``):

- ``POST /api/memory/search``       ``{"query", "top_k", "strategy", "alpha", "mmr", "mmr_lambda"}``
- ``POST /api/memory/remember``     ``{"fact"}`` or ``{"subject", "predicate", "object"}``
- ``POST /api/absorb``              the same body; both go through the absorb pipeline
- ``GET  /api/memory/episodes``     ``?limit=N``
- ``GET  /api/memory/wiki``         and ``GET /api/memory/wiki/{topic}``
- ``GET  /api/memory/stats``
- ``GET  /api/sync/status``
- list, archive, restore, boost, gc and distill: node/api/curation.py
- ``GET  /openapi.json``
- the graph's: ``/api/graph/entities``, ``/api/graph/relations``, ``/api/graph/query``
  (node/api/graph_routes.py)
- ``POST /api/exec-log``           a tool call for the execution log (node/api/exec_log_routes.py)
- ``GET /api/memory/conflicts``, ``POST /api/memory/conflicts/{id}/resolve``: concurrent edits
  kept aside, and keeping one side (node/api/conflict_routes.py)

Answers have the shapes of the CLI's ``--json`` output; a ``fact`` is remembered as
``feral memory remember TEXT`` does (:meth:`Node.absorb`: the answer says how it was
classified, beside the stored row's fields). Errors are ``{"error": {"code",
"message"}}`` with a status that fits: 400 unreadable JSON, 401 no or wrong token, 403 a browser
or a foreign Host, 404 an unknown topic or path, 409 what this node cannot do as configured
(e.g. vector search with no model), 413 a body over ``MAX_BODY_BYTES``, 422 a missing or
invalid field (``secret_refused``: text to remember holding what looks like a secret, refused by
node/secrets/scan.py before anything is stored), 500 anything unexpected (logged; the message
stays generic).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import msgspec
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from feral.node.links.answers_sync import StatusAnswer
from feral.node.links.status import sync_status
from feral.node.recall.search import SearchRequest
from feral.storage.db.rows import EpisodeRow
from feral.sync.errors import FeralError

from ..answers import AbsorbedAnswer, SearchAnswer, StatsAnswer, WikiPage, WikiTopic
from ..node import Node
from .bodies import EpisodesQuery, RememberRequest, fit, read_json
from .conflict_routes import ConflictApi
from .curation import curation_routes
from .endpoints import Endpoint, Handler
from .errors import ApiError, error_response, http_status
from .exec_log_routes import ExecLogApi
from .graph_routes import GraphApi
from .guard import ApiGuard
from .json_shapes import JsonObject, readable
from .query_check import reads_query, refuse_unread_query
from .schema import openapi_document

__all__ = ["MemoryApi"]

log = logging.getLogger("feral.api")


def _endpoint(handler: Handler) -> Endpoint:
    """Answer ``handler``'s value as JSON, and every failure as a JSON error."""

    async def endpoint(request: Request) -> Response:
        try:
            refuse_unread_query(request, handler)
            return JSONResponse(readable(await handler(request)))
        except ApiError as exc:
            return error_response(exc.status, exc.code, exc.message)
        except FeralError as exc:  # each kind's status: the table in node/api/errors.py
            return error_response(http_status(type(exc)), exc.code, str(exc))
        except Exception:
            log.exception("unexpected error answering %s %s", request.method, request.url.path)
            return error_response(500, "internal", "internal error; the node's log has details")

    endpoint.__name__ = handler.__name__
    endpoint.__doc__ = handler.__doc__
    setattr(endpoint, "__wrapped__", handler)  # noqa: B010  (the answer type is read from it)
    return endpoint


async def _not_found(request: Request, exc: Exception) -> Response:
    """Starlette's own errors (no such path, wrong method) as JSON errors."""
    assert isinstance(exc, HTTPException)
    code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
    return error_response(exc.status_code, code, str(exc.detail), dict(exc.headers or {}))


class MemoryApi:
    """The API's routes for one node, with the middleware and error handlers they need."""

    def __init__(self, node: Node, *, token: str | None, loopback_only: bool) -> None:
        self.node = node
        self.token = token
        self.loopback_only = loopback_only

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/api/memory/search", _endpoint(self.search), methods=["POST"]),
            Route("/api/memory/remember", _endpoint(self.remember), methods=["POST"]),
            Route("/api/absorb", _endpoint(self.remember), methods=["POST"]),
            Route("/api/memory/episodes", _endpoint(self.episodes), methods=["GET"]),
            Route("/api/memory/wiki", _endpoint(self.wiki_topics), methods=["GET"]),
            Route("/api/memory/wiki/{topic}", _endpoint(self.wiki_page), methods=["GET"]),
            Route("/api/memory/stats", _endpoint(self.stats), methods=["GET"]),
            Route("/api/sync/status", _endpoint(self.sync_status), methods=["GET"]),
            Route("/openapi.json", _endpoint(self.openapi), methods=["GET"]),
            *curation_routes(self.node, _endpoint),
            *GraphApi(self.node).routes(_endpoint),
            *ExecLogApi(self.node).routes(_endpoint),
            *ConflictApi(self.node).routes(_endpoint),
        ]

    def middleware(self) -> list[Middleware]:
        return [Middleware(ApiGuard, token=self.token, loopback_only=self.loopback_only)]

    def exception_handlers(
        self,
    ) -> dict[type[Exception], Callable[[Request, Exception], Awaitable[Response]]]:
        """Starlette's own errors as the API's JSON errors, for the app that serves the routes."""
        return {HTTPException: _not_found}

    async def search(self, request: Request) -> SearchAnswer:
        body = await read_json(request, SearchRequest)
        result = await self.node.search(**msgspec.structs.asdict(body))
        return result.as_dict()

    async def remember(self, request: Request) -> AbsorbedAnswer:
        body = await read_json(request, RememberRequest)
        triple, keep = body.triple(), body.keep_both
        if triple is None:
            text = str(body.fact).strip()
            return (await self.node.absorb(text, None, body.scope, keep_both=keep)).as_dict()
        return (await self.node.absorb(None, triple, body.scope, keep_both=keep)).as_dict()

    @reads_query
    async def episodes(self, request: Request) -> list[EpisodeRow]:
        query = fit(dict(request.query_params), EpisodesQuery, from_strings=True, top="the query")
        return await self.node.episodes(query.limit)

    async def wiki_topics(self, request: Request) -> list[WikiTopic]:
        return await self.node.wiki_topics()

    async def wiki_page(self, request: Request) -> WikiPage:
        topic = str(request.path_params["topic"])
        markdown = await self.node.wiki_page(topic)  # a path is PathRefused, a kind of 404
        return {"topic": topic, "markdown": markdown}

    async def stats(self, request: Request) -> StatsAnswer:
        return await self.node.stats()

    async def sync_status(self, request: Request) -> StatusAnswer:
        return await sync_status(self.node)

    async def openapi(self, request: Request) -> JsonObject:
        return openapi_document()
