"""The OpenAPI 3.1 document served at ``GET /openapi.json``, generated from the structures.

The request schemas come from :func:`msgspec.json.schema_components` over the very structures the
routes convert bodies into (:class:`~feral.node.recall.search.SearchRequest`,
:class:`~feral.node.api.bodies.RememberRequest`, and :class:`~feral.node.api.bodies.EpisodesQuery`
as query parameters), so a limit changed in node/settings/limits.py changes the document with it.
The answers' schemas come from the types the handlers return (node/answers.py, listed route by route
in :data:`ANSWER_TYPES`), read by node/api/answer_schema.py and shown as ``readable`` prints them
(``entities`` as an array); only the error and "any object" (the few answers not yet typed) are
written here.
"""

from __future__ import annotations

import json
from functools import cache

import msgspec

from feral.node.links.answers_sync import StatusAnswer
from feral.node.recall.answers_graph import GraphEntity, GraphQueryAnswer
from feral.node.recall.search import SearchRequest
from feral.storage.absorb.conflicts import ConflictRow

from ..answers import (
    AbsorbedAnswer,
    DistillAnswer,
    EntityRow,
    EpisodeRow,
    ExecutionRow,
    FactRow,
    GcAnswer,
    ListedMemory,
    MetaAnswer,
    SearchAnswer,
    StatsAnswer,
    WikiPage,
    WikiTopic,
)
from .answer_schema import AnswerSchemas, answer_schemas
from .bodies import MAX_BODY_BYTES, TRIPLE, EpisodesQuery, RememberRequest
from .conflict_routes import ConflictsQuery, conflict_schemas
from .curation import ArchiveRequest, BoostRequest, DistillRequest, GcRequest, ListQuery
from .exec_log_routes import exec_log_schemas
from .graph_routes import EntitiesQuery, graph_schemas
from .json_shapes import JsonObject, readable_schema

__all__ = [
    "ANSWER_TYPES",
    "REF",
    "REQUEST_STRUCTURES",
    "answer_components",
    "openapi_document",
    "request_schemas",
]

REF = "#/components/schemas/{name}"
REQUEST_STRUCTURES: tuple[type[msgspec.Struct], ...] = (
    SearchRequest,
    RememberRequest,
    ArchiveRequest,
    BoostRequest,
    GcRequest,
    DistillRequest,
)
"""The structures whose schemas are request bodies, by class name in ``components``."""


def _ref(name: str) -> JsonObject:
    return {"$ref": REF.format(name=name)}


def _answer(description: str, schema: JsonObject) -> JsonObject:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def request_schemas() -> JsonObject:
    """The JSON Schemas of the request structures (and what they use), as msgspec makes them."""
    _, components = msgspec.json.schema_components(REQUEST_STRUCTURES, ref_template=REF)
    remember = components["RememberRequest"]
    # Which members go together is the one rule the fields' types cannot carry.
    remember["oneOf"] = [
        {"required": ["fact"], "not": {"anyOf": [{"required": [p]} for p in TRIPLE]}},
        {"required": list(TRIPLE), "not": {"required": ["fact"]}},
    ]
    return components


def _query_parameters(structure: type[msgspec.Struct]) -> list[JsonObject]:
    """A structure of query parameters as OpenAPI ``parameters``."""
    _, components = msgspec.json.schema_components((structure,), ref_template=REF)
    schema = components[structure.__name__]
    return [
        {"name": name, "in": "query", "schema": field}
        for name, field in schema.get("properties", {}).items()
    ]


_STRING = {"type": "string"}
_ANSWERS: JsonObject = {
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
    "Object": {"type": "object", "additionalProperties": True},
}
"""The schemas no answer type gives: the error every route may answer, and any object."""
ANSWER_TYPES: dict[tuple[str, str], object] = {
    ("/api/memory/search", "post"): SearchAnswer,
    ("/api/memory/remember", "post"): AbsorbedAnswer,
    ("/api/absorb", "post"): AbsorbedAnswer,
    ("/api/memory/episodes", "get"): list[EpisodeRow],
    ("/api/memory/wiki", "get"): list[WikiTopic],
    ("/api/memory/wiki/{topic}", "get"): WikiPage,
    ("/api/memory/stats", "get"): StatsAnswer,
    ("/api/sync/status", "get"): StatusAnswer,
    ("/api/exec-log", "post"): ExecutionRow,
    ("/api/memory/conflicts", "get"): list[ConflictRow],
    ("/api/memory/conflicts/{conflict}/resolve", "post"): ConflictRow,
    ("/api/graph/entities", "post"): EntityRow,
    ("/api/graph/relations", "post"): FactRow,
    ("/api/graph/entities", "get"): list[GraphEntity],
    ("/api/graph/query", "post"): GraphQueryAnswer,
    ("/api/memory/list", "get"): list[ListedMemory],
    ("/api/memory/archive", "post"): FactRow | EpisodeRow,
    ("/api/memory/restore", "post"): FactRow | EpisodeRow,
    ("/api/memory/boost", "post"): MetaAnswer,
    ("/api/memory/gc", "post"): GcAnswer,
    ("/api/memory/distill", "post"): DistillAnswer,
}
"""Each route's answer, as the type its handler returns (node/answers.py): the document's
``200`` schemas and their components are made from these, not written here."""


def _typed(path: str, method: str, description: str) -> JsonObject:
    """The ``200`` answer of ``method path``, its schema made from :data:`ANSWER_TYPES`."""
    return _answer(description, AnswerSchemas(REF).of(ANSWER_TYPES[path, method]))


def answer_components() -> dict[str, JsonObject]:
    """The components of every answer type, as the API shows them (through ``readable``)."""
    return readable_schema(answer_schemas(ANSWER_TYPES.values(), REF))


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


Refusals = dict[str, JsonObject]
"""An operation's answers besides ``200`` and the errors every route may give, by status."""


def _get(
    summary: str,
    answer: JsonObject,
    *,
    parameters: list[JsonObject] | None = None,
    refusals: Refusals | None = None,
) -> JsonObject:
    operation: JsonObject = {"summary": summary}
    if parameters is not None:
        operation["parameters"] = parameters
    operation["responses"] = {"200": answer, **_ERRORS, **(refusals or {})}
    return {"get": operation}


def _post(
    summary: str,
    body: str,
    answer: JsonObject,
    *,
    parameters: list[JsonObject] | None = None,
    refusals: Refusals | None = None,
) -> JsonObject:
    content = {"application/json": {"schema": _ref(body)}}
    operation: JsonObject = {
        "summary": summary,
        "requestBody": {"required": True, "content": content},
        "responses": {"200": answer, **_BODY_ERRORS, **(refusals or {})},
    }
    if parameters is not None:
        operation["parameters"] = parameters
    return {"post": operation}


def _paths() -> JsonObject:
    episodes = _get(
        "The newest episodes",
        _typed("/api/memory/episodes", "get", "episodes, newest first"),
        parameters=_query_parameters(EpisodesQuery),
        refusals={"422": _answer("limit out of range", _ref("Error"))},
    )
    topic = {"name": "topic", "in": "path", "required": True, "schema": _STRING}
    shown = _typed("/api/memory/wiki/{topic}", "get", "the page's Markdown")
    missing = {"404": _answer("no page for that topic", _ref("Error"))}
    page = _get("One wiki page", shown, parameters=[topic], refusals=missing)
    refused = _answer(
        "a missing, unknown or invalid field; or code secret_refused: the text holds what looks"
        " like a secret (nothing is stored; the message names the kind, never the value)",
        _ref("Error"),
    )
    remember = _post(
        "Remember what was said (a triple if a phrasing rule fits) or a triple",
        "RememberRequest",
        _typed("/api/memory/remember", "post", "what the absorb pipeline did, with the row"),
        refusals={"422": refused},
    )
    absorb = _post(
        "Absorb a fact: validate, scan, classify against what is stored, write with edges",
        "RememberRequest",
        _typed("/api/absorb", "post", "what the absorb pipeline did, with the stored row"),
        refusals={"422": refused},
    )
    return {
        "/api/memory/search": _post(
            "Search episodes and facts (fts, vector or hybrid; optional MMR)",
            "SearchRequest",
            _typed("/api/memory/search", "post", "hits, best first"),
        ),
        "/api/memory/remember": remember,
        "/api/absorb": absorb,
        "/api/memory/episodes": episodes,
        "/api/memory/wiki": _get(
            "The compiled wiki pages (derived data; compile_wiki rebuilds them)",
            _typed("/api/memory/wiki", "get", "the pages, by topic"),
        ),
        "/api/memory/wiki/{topic}": page,
        "/api/memory/stats": _get(
            "Rows per tier, the delta log, vectors and the embedder",
            _typed("/api/memory/stats", "get", "as feral memory stats --json, less prune"),
        ),
        "/api/sync/status": _get(
            "This node's clock, state digest and peers",
            _typed("/api/sync/status", "get", "as feral sync status --json"),
        ),
        "/openapi.json": _get("This document", _answer("OpenAPI 3.1", _ref("Object"))),
        **_curation_paths(),
        **_graph_paths(),
        **_exec_log_paths(),
        **_conflict_paths(),
        "/mcp": _mcp_path(),
    }


def _mcp_path() -> JsonObject:
    """The MCP server over streamable HTTP (node/mcp/mount.py): JSON-RPC messages, whose
    tools and their argument shapes the MCP client lists itself (``tools/list``)."""
    content = {"application/json": {"schema": _ref("Object")}}
    return {
        "post": {
            "summary": "The MCP server (streamable HTTP, stateless): one JSON-RPC message",
            "requestBody": {"required": True, "content": content},
            "responses": {"200": _answer("the JSON-RPC answer", _ref("Object")), **_ERRORS},
        }
    }


def _exec_log_paths() -> JsonObject:
    """The execution log's route (node/api/exec_log_routes.py)."""
    record = _post(
        "Log a tool call in the execution log (insert-only, replicated)",
        "ToolCall",
        _typed("/api/exec-log", "post", "the stored entry, as feral log record --json"),
        refusals={"422": _answer(
            "a missing, unknown or invalid field; or code secret_refused: the entry holds what"
            " looks like a secret (nothing is stored)",
            _ref("Error"),
        )},
    )  # fmt: skip
    return {"/api/exec-log": record}


def _conflict_paths() -> JsonObject:
    """The conflicts' routes (node/api/conflict_routes.py)."""
    listing = _get(
        "Concurrent edits last-write-wins set aside: both versions and rows of each",
        _typed("/api/memory/conflicts", "get", "as feral memory conflicts --json"),
        parameters=_query_parameters(ConflictsQuery),
        refusals={"422": _answer("a parameter that does not fit", _ref("Error"))},
    )
    resolve = _post(
        "Keep one version of a conflict: written again above both, marked resolved (replicated)",
        "ResolveRequest",
        _typed("/api/memory/conflicts/{conflict}/resolve", "post", "the resolved record"),
        parameters=[{"name": "conflict", "in": "path", "required": True, "schema": _STRING}],
        refusals={"404": _answer(
            "no open conflict with that id, or not one of its versions", _ref("Error")
        )},
    )  # fmt: skip
    return {"/api/memory/conflicts": listing, "/api/memory/conflicts/{conflict}/resolve": resolve}


def _graph_paths() -> JsonObject:
    """The graph's routes (node/api/graph_routes.py)."""
    listing = _get(
        "Entities with their attributes and conflicting values",
        _typed("/api/graph/entities", "get", "as feral graph list --json"),
        parameters=_query_parameters(EntitiesQuery),
    )
    added = _post(
        "Name an entity", "EntityRequest", _typed("/api/graph/entities", "post", "the entity")
    )
    query = _post(
        "Entities reachable from one, breadth first",
        "GraphQuery",
        _typed("/api/graph/query", "post", "as feral graph query --json"),
        refusals={"404": _answer("no entity to start from", _ref("Error"))},
    )
    relation = _post(
        "Relate two entities (stored as a fact)",
        "RelationRequest",
        _typed("/api/graph/relations", "post", "the stored fact"),
    )
    return {
        "/api/graph/entities": {**added, **listing},
        "/api/graph/relations": relation,
        "/api/graph/query": query,
    }


def _curation_paths() -> JsonObject:
    """node/api/curation.py's routes."""
    listing = _get(
        "Memories newest first, with their meta and status",
        _typed("/api/memory/list", "get", "as feral memory list --json"),
        parameters=_query_parameters(ListQuery),
        refusals={"422": _answer("a parameter out of range", _ref("Error"))},
    )
    missing = {"404": _answer("no memory with that id", _ref("Error"))}
    return {
        "/api/memory/list": listing,
        "/api/memory/archive": _post(
            "Archive a memory (replicated; restore undoes it)", "ArchiveRequest",
            _typed("/api/memory/archive", "post", "the row"), refusals=missing,
        ),
        "/api/memory/restore": _post(
            "Restore an archived memory", "ArchiveRequest",
            _typed("/api/memory/restore", "post", "the row"), refusals=missing,
        ),
        "/api/memory/boost": _post(
            "Set a memory's importance multiplier (replicated)", "BoostRequest",
            _typed("/api/memory/boost", "post", "the memory's meta row"), refusals=missing,
        ),
        "/api/memory/gc": _post(
            "Archive stale session facts, consolidate crowded groups (dry_run: plan only)",
            "GcRequest", _typed("/api/memory/gc", "post", "as feral memory gc --json"),
        ),
        "/api/memory/distill": _post(
            "Promote a session's facts to the user's scope (dry_run: plan only)",
            "DistillRequest",
            _typed("/api/memory/distill", "post", "as feral memory distill --json"),
        ),
    }  # fmt: skip


@cache
def _document_text() -> str:
    document = {
        "openapi": "3.1.0",
        "info": {
            "title": "feral",
            "version": "1",
            "description": "The HTTP API of one feral node (on the port of its /sync endpoint).",
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                **_ANSWERS,
                **answer_components(),
                **request_schemas(),
                **graph_schemas(REF),
                **exec_log_schemas(REF),
                **conflict_schemas(REF),
            },
        },
        "security": [{}, {"bearer": []}],
        "paths": _paths(),
    }
    return json.dumps(document)  # JSON types only (msgspec writes defaults such as () as-is)


def openapi_document() -> JsonObject:
    """The document, made once per process (the first call, not the import, pays for it)."""
    document: JsonObject = json.loads(_document_text())
    return document
