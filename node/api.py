"""The HTTP API: FERAL's paths, served by the same Starlette app (and port) as ``/sync``.

Routes (bodies and answers are JSON; see :data:`OPENAPI`, served at ``GET /openapi.json``):

- ``POST /api/memory/search``       ``{"query", "top_k", "strategy", "alpha", "mmr", "mmr_lambda"}``
- ``POST /api/memory/remember``     ``{"fact"}`` or ``{"subject", "predicate", "object"}``
- ``GET  /api/memory/episodes``     ``?limit=N``
- ``GET  /api/memory/wiki``         and ``GET /api/memory/wiki/{topic}``
- ``GET  /api/memory/stats``
- ``GET  /api/sync/status``
- ``GET  /openapi.json``

Answers have the shapes of the CLI's ``--json`` output; a ``fact`` is remembered as
``feral memory remember TEXT`` does (:meth:`Node.remember_text`). Errors are ``{"error": {"code",
"message"}}`` with a status that fits: 400 unreadable JSON, 401 no or wrong token, 403 a browser
or a foreign Host, 404 an unknown topic or path, 409 what this node cannot do as configured
(e.g. vector search with no model), 413 a body over :data:`MAX_BODY_BYTES`, 422 a missing or
invalid field, 500 anything unexpected (logged; the message stays generic).

Security (TEST-CATALOG, "Security baseline"): ``feral serve`` binds to loopback by default. Bound
to any other address the API needs ``Authorization: Bearer <token>``, the token being the
contents of ``<home>/api_token`` (made on the first such serve, mode 0600; compared with
:func:`hmac.compare_digest`). Browsers are refused outright (any ``Origin`` header, or a
``Sec-Fetch-Site`` other than ``none``): the API serves no pages, so every browser request to it
is cross-site, CSRF or DNS rebinding. On loopback the ``Host`` header must name a loopback
address too, which stops a rebound page whose browser sends no ``Origin``. ``/sync`` keeps its
own authentication (signed handshakes between paired nodes) and is untouched by all of this.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import os
import secrets
import stat
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, NoReturn, cast

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from feral.sync.errors import ConfigError, FeralError, NotFoundError, ProtocolError

from .identity import write_private_file
from .limits import SEARCH_STRATEGIES, Strategy
from .node import Node
from .status import sync_status

__all__ = [
    "API_TOKEN_FILE",
    "MAX_BODY_BYTES",
    "OPENAPI",
    "ApiError",
    "ApiGuard",
    "MemoryApi",
    "is_loopback_host",
    "load_or_create_api_token",
]

log = logging.getLogger("feral.api")

MAX_BODY_BYTES = 1024 * 1024
"""The largest request body read (1 MiB); a larger one is answered 413."""
DRAIN_LIMIT = 8 * MAX_BODY_BYTES
"""An oversized body up to this size is read and dropped before the 413, so the client sees the
answer instead of a reset connection; a bigger one (as declared or as sent) is cut off."""
MAX_TOP_K = 1000
MAX_EPISODES = 100_000
MAX_QUERY_CHARS = 10_000
API_TOKEN_FILE = "api_token"
MIN_TOKEN_CHARS = 16


class ApiError(Exception):
    """A request the API refuses: the HTTP status, a stable code and a message for people."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def error_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    """``{"error": {"code", "message"}}`` with ``status``."""
    return JSONResponse({"error": {"code": code, "message": message}}, status, headers)


# -- who may call ------------------------------------------------------------------------------


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) is this machine only."""
    name = host.strip().strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def load_or_create_api_token(home: Path) -> tuple[str, bool]:
    """The API token kept in ``<home>/api_token``, made (mode 0600) if missing.

    Returns:
        The token, and whether it was just made.

    Raises:
        ConfigError: the file cannot be read, is readable by other users, or holds no usable
            token (at least 16 printable characters, no spaces); the message names the file.
    """
    path = home / API_TOKEN_FILE
    try:
        with path.open("rb") as file:
            mode = os.fstat(file.fileno()).st_mode
            raw = file.read(4097)
    except FileNotFoundError:
        token = secrets.token_urlsafe(32)
        write_private_file(path, (token + "\n").encode("ascii"))
        return token, True
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if os.name == "posix" and stat.S_IMODE(mode) & 0o077:
        raise ConfigError(
            f"{path}: readable by other users (mode {stat.S_IMODE(mode):o}); chmod 600 it"
        )
    try:
        token = raw.decode("ascii").strip()
    except UnicodeDecodeError:
        token = ""
    if len(token) < MIN_TOKEN_CHARS or len(token) > 4096 or not _token_chars(token):
        raise ConfigError(
            f"{path}: the API token must be {MIN_TOKEN_CHARS} to 4096 printable ASCII characters "
            "without spaces; delete the file to have a new one made"
        )
    return token, False


def _token_chars(token: str) -> bool:
    return all(33 <= ord(ch) <= 126 for ch in token)


class ApiGuard:
    """ASGI middleware for every plain HTTP request: browsers, Host and token (see the module).

    WebSocket scopes (``/sync``) pass through untouched: peers authenticate in the handshake.
    """

    def __init__(self, app: ASGIApp, *, token: str | None, loopback_only: bool) -> None:
        self.app = app
        self.token = token.encode() if token is not None else None
        self.loopback_only = loopback_only

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self.refusal(Headers(scope=scope))
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def refusal(self, headers: Headers) -> Response | None:
        """Why this request may not reach a route (as the answer to send), or ``None``."""
        if "origin" in headers or headers.get("sec-fetch-site", "none") != "none":
            return error_response(403, "browser_refused", "browsers may not call the feral API")
        if self.loopback_only and not _loopback_host_header(headers.get("host", "")):
            return error_response(
                403, "host_refused", "the API on loopback answers only to a loopback Host"
            )
        if self.token is None:
            return None
        scheme, _, given = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not given.strip():
            return error_response(
                401,
                "unauthorized",
                "this API needs 'Authorization: Bearer <token>' (the token is in HOME/api_token)",
                {"WWW-Authenticate": 'Bearer realm="feral"'},
            )
        if not hmac.compare_digest(given.strip().encode(), self.token):
            return error_response(
                401,
                "unauthorized",
                "wrong API token",
                {"WWW-Authenticate": 'Bearer realm="feral", error="invalid_token"'},
            )
        return None


def _loopback_host_header(value: str) -> bool:
    """Whether a Host header (``name``, ``name:port``, ``[v6]:port``) names a loopback host."""
    if value.startswith("["):
        name = value[1 : value.find("]")] if "]" in value else ""
    else:
        name = value.rsplit(":", 1)[0] if value.count(":") == 1 else value
    return bool(name) and is_loopback_host(name)


# -- reading requests --------------------------------------------------------------------------


async def read_body(request: Request) -> bytes:
    """The body, at most :data:`MAX_BODY_BYTES` (else 413)."""
    too_large = ApiError(413, "too_large", f"the request body is over {MAX_BODY_BYTES} bytes")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > DRAIN_LIMIT:
        raise too_large
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > DRAIN_LIMIT:
                break
            if size <= MAX_BODY_BYTES:
                chunks.append(chunk)
    except ClientDisconnect as exc:
        raise ApiError(400, "bad_request", "the client went away mid-body") from exc
    if size > MAX_BODY_BYTES:
        raise too_large
    return b"".join(chunks)


def parse_json(raw: bytes) -> object:
    """Decode a JSON body: UTF-8, no NaN or infinities, no repeated keys (else 400)."""
    if not raw.strip():
        raise ApiError(400, "bad_json", "the request body is empty: send a JSON object")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError(400, "bad_json", f"the body is not UTF-8 (byte {exc.start})") from exc
    try:
        return json.loads(text, parse_constant=_no_constant, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        message = f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        raise ApiError(400, "bad_json", message) from exc
    except RecursionError as exc:
        raise ApiError(400, "bad_json", "the JSON is nested too deeply") from exc


def _no_constant(name: str) -> NoReturn:
    raise ApiError(400, "bad_json", f"{name} is not a JSON number")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ApiError(400, "bad_json", f"the key {json.dumps(key)} appears twice")
        result[key] = value
    return result


class Fields:
    """The members of a JSON object body, each read once with its check (422 when it fails).

    A member that is absent or ``null`` reads as ``None`` (the default applies).
    """

    def __init__(self, body: object, known: tuple[str, ...]) -> None:
        if not isinstance(body, dict):
            raise _invalid("the body must be a JSON object")
        unknown = sorted(str(key) for key in body if key not in known)
        if unknown:
            raise _invalid(f"unknown field(s) {', '.join(unknown)}; known: {', '.join(known)}")
        self.body: dict[str, Any] = body

    def _value(self, name: str, required: bool) -> Any:
        value = self.body.get(name)
        if value is None and required:
            raise _invalid(f"{name} is required")
        return value

    def text(
        self, name: str, *, required: bool = False, max_chars: int | None = None
    ) -> str | None:
        value = self._value(name, required)
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip():
            raise _invalid(f"{name} must be a non-empty string")
        if max_chars is not None and len(value) > max_chars:
            raise _invalid(f"{name} must be at most {max_chars} characters")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise _invalid(f"{name} holds a lone surrogate (not Unicode text)") from exc
        return value

    def integer(self, name: str, low: int, high: int) -> int | None:
        value = self._value(name, False)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise _invalid(f"{name} must be an integer from {low} to {high}")
        return value

    def fraction(self, name: str) -> float | None:
        value = self._value(name, False)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise _invalid(f"{name} must be a number from 0 to 1")
        return float(value)

    def flag(self, name: str) -> bool | None:
        value = self._value(name, False)
        if value is not None and not isinstance(value, bool):
            raise _invalid(f"{name} must be true or false")
        return value

    def choice(self, name: str, allowed: tuple[str, ...]) -> str | None:
        value = self._value(name, False)
        if value is None:
            return None
        if not isinstance(value, str) or value not in allowed:
            raise _invalid(f"{name} must be one of {', '.join(allowed)}")
        return value


def _invalid(message: str) -> ApiError:
    return ApiError(422, "invalid_request", message)


# -- the routes --------------------------------------------------------------------------------

Handler = Callable[[Request], Awaitable[Any]]


def _endpoint(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """Answer ``handler``'s value as JSON, and every failure as a JSON error."""

    async def endpoint(request: Request) -> Response:
        try:
            return JSONResponse(await handler(request))
        except ApiError as exc:
            return error_response(exc.status, exc.code, exc.message)
        except NotFoundError as exc:
            return error_response(404, "not_found", str(exc))
        except ConfigError as exc:
            return error_response(409, "not_available", str(exc))
        except ProtocolError as exc:  # a value storage refuses (too long, a NUL, ...)
            return error_response(422, "invalid_value", str(exc))
        except FeralError as exc:
            return error_response(400, "refused", str(exc))
        except Exception:
            log.exception("unexpected error answering %s %s", request.method, request.url.path)
            return error_response(500, "internal", "internal error; the node's log has details")

    endpoint.__name__ = handler.__name__
    endpoint.__doc__ = handler.__doc__
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
            Route("/api/memory/episodes", _endpoint(self.episodes), methods=["GET"]),
            Route("/api/memory/wiki", _endpoint(self.wiki_topics), methods=["GET"]),
            Route("/api/memory/wiki/{topic}", _endpoint(self.wiki_page), methods=["GET"]),
            Route("/api/memory/stats", _endpoint(self.stats), methods=["GET"]),
            Route("/api/sync/status", _endpoint(self.sync_status), methods=["GET"]),
            Route("/openapi.json", _endpoint(self.openapi), methods=["GET"]),
        ]

    def middleware(self) -> list[Middleware]:
        return [Middleware(ApiGuard, token=self.token, loopback_only=self.loopback_only)]

    def exception_handlers(self) -> dict[Any, Callable[[Request, Exception], Awaitable[Response]]]:
        return {HTTPException: _not_found}

    async def search(self, request: Request) -> dict[str, Any]:
        fields = Fields(
            parse_json(await read_body(request)),
            ("query", "top_k", "strategy", "alpha", "mmr", "mmr_lambda"),
        )
        query = fields.text("query", required=True, max_chars=MAX_QUERY_CHARS)
        assert query is not None
        result = await self.node.search(
            query,
            top_k=fields.integer("top_k", 1, MAX_TOP_K),
            strategy=cast(Strategy | None, fields.choice("strategy", SEARCH_STRATEGIES)),
            alpha=fields.fraction("alpha"),
            mmr=fields.flag("mmr"),
            mmr_lambda=fields.fraction("mmr_lambda"),
        )
        return result.as_dict()

    async def remember(self, request: Request) -> dict[str, Any]:
        fields = Fields(
            parse_json(await read_body(request)), ("fact", "subject", "predicate", "object")
        )
        fact = fields.text("fact")
        parts = (fields.text("subject"), fields.text("predicate"), fields.text("object"))
        if fact is not None and any(p is not None for p in parts):
            raise _invalid("give fact or subject/predicate/object, not both")
        if fact is not None:
            return await self.node.remember_text(fact.strip())
        if any(p is None for p in parts):
            if any(p is not None for p in parts):
                raise _invalid("subject, predicate and object go together")
            raise _invalid("give fact, or subject, predicate and object")
        subject, predicate, obj = (str(p) for p in parts)
        return await self.node.remember((subject, predicate, obj))

    async def episodes(self, request: Request) -> list[dict[str, Any]]:
        raw = request.query_params.get("limit")
        limit = 20
        if raw is not None:
            if not raw.isdigit() or not 1 <= int(raw) <= MAX_EPISODES:
                raise _invalid(f"limit must be an integer from 1 to {MAX_EPISODES}")
            limit = int(raw)
        return await self.node.episodes(limit)

    async def wiki_topics(self, request: Request) -> list[dict[str, Any]]:
        return await self.node.wiki_topics()

    async def wiki_page(self, request: Request) -> dict[str, Any]:
        topic = str(request.path_params["topic"])
        try:
            markdown = await self.node.wiki_page(topic)
        except ConfigError as exc:  # a topic that looks like a path, or a page that points out
            raise NotFoundError(str(exc)) from exc
        return {"topic": topic, "markdown": markdown}

    async def stats(self, request: Request) -> dict[str, Any]:
        return await self.node.stats()

    async def sync_status(self, request: Request) -> dict[str, Any]:
        return await sync_status(self.node)

    async def openapi(self, request: Request) -> dict[str, Any]:
        return OPENAPI


# -- the OpenAPI document ----------------------------------------------------------------------


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json_content(schema: dict[str, Any]) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


def _answer(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": _json_content(schema)}


_ERRORS = {
    str(status): _answer(description, _ref("Error"))
    for status, description in (
        (401, "no token, or the wrong one (only when serving on a non-loopback address)"),
        (403, "a browser (Origin or Sec-Fetch-Site), or a non-loopback Host on loopback"),
        (500, "an unexpected error (logged on the node)"),
    )
}
_BODY_ERRORS = {
    **_ERRORS,
    "400": _answer("the body is not JSON, or is refused", _ref("Error")),
    "409": _answer("this node cannot do it as configured", _ref("Error")),
    "413": _answer(f"the body is over {MAX_BODY_BYTES} bytes", _ref("Error")),
    "422": _answer("a missing, unknown or invalid field", _ref("Error")),
}
_STRING = {"type": "string"}
_FRACTION = {"type": "number", "minimum": 0, "maximum": 1}

OPENAPI: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {
        "title": "feral",
        "version": "1",
        "description": "The HTTP API of one feral node (on the port of its /sync endpoint).",
    },
    "components": {
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        "schemas": {
            "Error": {
                "type": "object",
                "required": ["error"],
                "properties": {
                    "error": {
                        "type": "object",
                        "required": ["code", "message"],
                        "properties": {"code": _STRING, "message": _STRING},
                    }
                },
            },
            "SearchRequest": {
                "type": "object",
                "required": ["query"],
                "additionalProperties": False,
                "properties": {
                    "query": {**_STRING, "minLength": 1, "maxLength": MAX_QUERY_CHARS},
                    "top_k": {"type": "integer", "minimum": 1, "maximum": MAX_TOP_K},
                    "strategy": {"enum": list(SEARCH_STRATEGIES)},
                    "alpha": _FRACTION,
                    "mmr": {"type": "boolean"},
                    "mmr_lambda": _FRACTION,
                },
            },
            "Hit": {
                "type": "object",
                "required": ["id", "tier", "content", "score", "fts_score", "vector_score"],
                "properties": {
                    "id": _STRING,
                    "tier": {"enum": ["episodic", "semantic"]},
                    "content": _STRING,
                    "score": {"type": "number"},
                    "fts_score": _FRACTION,
                    "vector_score": _FRACTION,
                    "mmr_score": {"type": "number"},
                    "row": _ref("Row"),
                },
            },
            "SearchResponse": {
                "type": "object",
                "required": ["results", "total", "query_time_ms", "strategy", "mmr", "notes"],
                "properties": {
                    "results": {"type": "array", "items": _ref("Hit")},
                    "total": {"type": "integer"},
                    "query_time_ms": {"type": "number"},
                    "strategy": {"enum": list(SEARCH_STRATEGIES)},
                    "mmr": {"type": "boolean"},
                    "notes": {"type": "array", "items": _STRING},
                },
            },
            "RememberRequest": {
                "oneOf": [
                    {
                        "type": "object",
                        "required": ["fact"],
                        "additionalProperties": False,
                        "properties": {"fact": {**_STRING, "minLength": 1}},
                    },
                    {
                        "type": "object",
                        "required": ["subject", "predicate", "object"],
                        "additionalProperties": False,
                        "properties": {
                            "subject": {**_STRING, "minLength": 1},
                            "predicate": {**_STRING, "minLength": 1},
                            "object": {**_STRING, "minLength": 1},
                        },
                    },
                ]
            },
            "Row": {
                "type": "object",
                "required": ["id"],
                "properties": {"id": _STRING},
                "additionalProperties": True,
            },
            "Topic": {
                "type": "object",
                "required": ["topic", "path", "sources", "needs_review"],
                "properties": {
                    "topic": _STRING,
                    "path": _STRING,
                    "sources": {"type": "array", "items": _STRING},
                    "needs_review": {"type": "boolean"},
                },
            },
            "Page": {
                "type": "object",
                "required": ["topic", "markdown"],
                "properties": {"topic": _STRING, "markdown": _STRING},
            },
            "Object": {"type": "object", "additionalProperties": True},
        },
    },
    "security": [{}, {"bearer": []}],
    "paths": {
        "/api/memory/search": {
            "post": {
                "summary": "Search episodes and facts (fts, vector or hybrid; optional MMR)",
                "requestBody": {"required": True, "content": _json_content(_ref("SearchRequest"))},
                "responses": {
                    "200": _answer("hits, best first", _ref("SearchResponse")),
                    **_BODY_ERRORS,
                },
            }
        },
        "/api/memory/remember": {
            "post": {
                "summary": "Remember what was said (a triple if a phrasing rule fits) or a triple",
                "requestBody": {
                    "required": True,
                    "content": _json_content(_ref("RememberRequest")),
                },
                "responses": {"200": _answer("the stored row", _ref("Row")), **_BODY_ERRORS},
            }
        },
        "/api/memory/episodes": {
            "get": {
                "summary": "The newest episodes",
                "parameters": [
                    {
                        "name": "limit",
                        "in": "query",
                        "schema": {
                            "type": "integer",
                            "minimum": 1,
                            "maximum": MAX_EPISODES,
                            "default": 20,
                        },
                    }
                ],
                "responses": {
                    "200": _answer(
                        "episodes, newest first", {"type": "array", "items": _ref("Row")}
                    ),
                    "422": _answer("limit out of range", _ref("Error")),
                    **_ERRORS,
                },
            }
        },
        "/api/memory/wiki": {
            "get": {
                "summary": "The compiled wiki pages (derived data; compile_wiki rebuilds them)",
                "responses": {
                    "200": _answer(
                        "the pages, by topic", {"type": "array", "items": _ref("Topic")}
                    ),
                    **_ERRORS,
                },
            }
        },
        "/api/memory/wiki/{topic}": {
            "get": {
                "summary": "One wiki page",
                "parameters": [
                    {"name": "topic", "in": "path", "required": True, "schema": _STRING}
                ],
                "responses": {
                    "200": _answer("the page's Markdown", _ref("Page")),
                    "404": _answer("no page for that topic", _ref("Error")),
                    **_ERRORS,
                },
            }
        },
        "/api/memory/stats": {
            "get": {
                "summary": "Rows per tier, the delta log, vectors and the embedder",
                "responses": {
                    "200": _answer("as feral memory stats --json", _ref("Object")),
                    **_ERRORS,
                },
            }
        },
        "/api/sync/status": {
            "get": {
                "summary": "This node's clock, state digest and peers",
                "responses": {
                    "200": _answer("as feral sync status --json", _ref("Object")),
                    **_ERRORS,
                },
            }
        },
        "/openapi.json": {
            "get": {
                "summary": "This document",
                "responses": {"200": _answer("OpenAPI 3.1", _ref("Object")), **_ERRORS},
            }
        },
    },
}
