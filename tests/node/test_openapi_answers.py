"""The OpenAPI document's answers are made from node/answers.py's types, and real answers fit.

The document is read as ``GET /openapi.json`` serves it; the answers are a real node's, over
HTTP. Each is checked against its route's schema made strict (every object's keys must be the
ones its type names), so a key an answer carries and its type forgets fails here too.
"""

from __future__ import annotations

import copy
import json
import typing
from typing import Any

import jsonschema  # type: ignore[import-untyped]  # no stubs installed
import pytest
from referencing import Registry
from referencing.jsonschema import DRAFT202012
from starlette.routing import Route

from feral.node.api.answer_schema import AnswerSchemas, answer_schemas
from feral.node.api.json_shapes import readable_schema
from feral.node.api.routes import MemoryApi
from feral.node.api.schema import ANSWER_TYPES, REF
from feral.node.links.dial import dial
from feral.node.node import Node

from .support import Mesh
from .test_api import Api, api_for

UNTYPED_ANSWERS = {
    ("/openapi.json", "get"),
    ("/mcp", "post"),
}
"""The routes whose answer is still described as any object (see the module docstring)."""


def answer_schema(document: dict[str, Any], path: str, method: str) -> dict[str, Any]:
    content = document["paths"][path][method]["responses"]["200"]["content"]
    schema: dict[str, Any] = content["application/json"]["schema"]
    return schema


def strict(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with no key allowed beyond those each component's type names."""
    tight = copy.deepcopy(document)
    for component in tight["components"]["schemas"].values():
        if "properties" in component and "additionalProperties" not in component:
            component["additionalProperties"] = False
    return tight


def assert_fits(document: dict[str, Any], path: str, method: str, body: object) -> None:
    """``body`` is valid against the strict schema of the answer of ``method path``."""
    tight = strict(document)
    registry = Registry().with_resource("urn:doc", DRAFT202012.create_resource(tight))
    schema = {**answer_schema(tight, path, method), "$schema": DRAFT}
    refs = json.loads(json.dumps(schema).replace('"#/components', '"urn:doc#/components'))
    jsonschema.Draft202012Validator(refs, registry=registry).validate(body)


DRAFT = "https://json-schema.org/draft/2020-12/schema"


async def test_the_served_answer_schemas_are_the_generated_ones(api: Api) -> None:
    document = (await api.get("/openapi.json")).body
    generated = readable_schema(answer_schemas(ANSWER_TYPES.values(), REF))
    served = document["components"]["schemas"]
    assert {name: served[name] for name in generated} == json.loads(json.dumps(generated))
    schemas = AnswerSchemas(REF)
    for (path, method), answer in ANSWER_TYPES.items():
        made = json.loads(json.dumps(schemas.of(answer)))
        assert answer_schema(document, path, method) == made, (path, method)


async def test_every_answer_but_a_few_has_its_type(api: Api) -> None:
    document = (await api.get("/openapi.json")).body
    routes = {(path, method) for path, item in document["paths"].items() for method in item}
    assert routes - set(ANSWER_TYPES) == UNTYPED_ANSWERS
    for path, method in UNTYPED_ANSWERS:
        schema = json.dumps(answer_schema(document, path, method))
        assert REF.format(name="Object") in schema, (path, method)


async def test_each_route_answers_the_type_the_document_is_made_from(node: Node) -> None:
    answered = {}
    for route in MemoryApi(node, token=None, loopback_only=True).routes():
        assert isinstance(route, Route)
        handler = getattr(route.endpoint, "__wrapped__")  # noqa: B009  (set by _endpoint)
        for method in route.methods or ():
            if method != "HEAD":
                answered[route.path, method.lower()] = typing.get_type_hints(handler)["return"]
    assert {key: answered[key] for key in ANSWER_TYPES} == ANSWER_TYPES
    assert set(answered) - set(ANSWER_TYPES) == UNTYPED_ANSWERS - {("/mcp", "post")}


def test_a_key_the_type_does_not_name_fails_the_check() -> None:
    document = {
        "components": {"schemas": readable_schema(answer_schemas(ANSWER_TYPES.values(), REF))},
        "paths": {"/x": {"get": {"responses": {"200": {"content": {"application/json": {
            "schema": {"$ref": REF.format(name="WikiPage")}}}}}}}},
    }  # fmt: skip
    assert_fits(document, "/x", "get", {"topic": "t", "markdown": "m"})
    with pytest.raises(jsonschema.ValidationError):
        assert_fits(document, "/x", "get", {"topic": "t", "markdown": "m", "more": 1})
    with pytest.raises(jsonschema.ValidationError):
        assert_fits(document, "/x", "get", {"topic": "t"})


async def test_real_answers_fit_their_schemas(api: Api, node: Node) -> None:
    document = (await api.get("/openapi.json")).body
    said = {"subject": "Alice", "predicate": "lives_in", "object": "Berlin"}
    calls: list[tuple[str, str, object]] = [
        ("/api/memory/remember", "post", said),
        ("/api/memory/remember", "post", said),  # a duplicate: merged_into
        ("/api/absorb", "post", {"fact": "Alice lives in Paris"}),
        ("/api/memory/remember", "post", {"fact": "I like tea and I work at Acme"}),
        ("/api/memory/search", "post", {"query": "Alice", "top_k": 5}),
        ("/api/memory/search", "post", {"query": "Sam Oslo", "strategy": "fts"}),
        ("/api/memory/stats", "get", None),
        ("/api/sync/status", "get", None),
        ("/api/memory/list", "get", None),
        ("/api/memory/gc", "post", {"dry_run": True}),
        ("/api/memory/distill", "post", {"session": "s1", "dry_run": True}),
        ("/api/graph/entities", "post", {"type": "person", "name": "Sam"}),
        ("/api/graph/relations", "post",
         {"from": "person:Sam", "relation": "lives_in", "to": "place:Oslo"}),
        ("/api/exec-log", "post", {"tool": "http", "args": {"url": "x"}, "result": "ok"}),
        ("/api/graph/entities", "get", None),
        ("/api/graph/query", "post", {"start": "person:Sam", "direction": "both", "hops": 2}),
    ]  # fmt: skip
    await node.add_episode("s1", "Alice met Sam in Oslo", ["Alice", "Sam"])
    await node.compile_wiki()
    answers: dict[str, list[Any]] = {}
    for path, method, body in calls:
        answers.setdefault(path, []).append(await answer_fitting(api, document, method, path, body))
    remembered = answers["/api/memory/remember"]
    some_id = remembered[0]["id"]
    for path, method, body in [
        ("/api/memory/episodes", "get", None),
        ("/api/memory/wiki", "get", None),
        ("/api/memory/wiki/alice", "get", None),
        ("/api/memory/boost", "post", {"id": some_id, "importance": 2.0, "reason": "often"}),
        ("/api/memory/archive", "post", {"id": some_id}),
        ("/api/memory/restore", "post", {"id": some_id}),
        ("/api/memory/conflicts", "get", None),
    ]:
        answers.setdefault(path, []).append(await answer_fitting(api, document, method, path, body))
    assert remembered[1]["merged_into"] == some_id and "clauses" in remembered[2]
    hits = [hit for found in answers["/api/memory/search"] for hit in found["results"]]
    assert {hit["tier"] for hit in hits} == {"semantic", "episodic"}  # both kinds were checked
    for path in ("/api/memory/list", "/api/graph/entities", "/api/memory/episodes"):
        assert answers[path][0], path
    assert answers["/api/graph/query"][0]["results"] and answers["/api/memory/wiki"][0]


async def answer_fitting(
    api: Api, document: dict[str, Any], method: str, path: str, body: object
) -> Any:
    """The answer to ``method path``, checked to fit the schema of its route."""
    answer = await api.call(method.upper(), path, body)
    assert answer.status == 200, (path, answer.body)
    templated = "/api/memory/wiki/{topic}" if path.startswith("/api/memory/wiki/") else path
    assert_fits(document, templated, method, answer.body)
    return answer.body


async def test_sync_status_fits_with_a_peer_met_and_one_never_met(mesh: Mesh) -> None:
    mesh.add("b", "c")
    mesh.pair("a", mesh.peer("b"), mesh.peer("c"))
    mesh.pair("b", mesh.peer("a", dial=False))
    node_a, node_b = await mesh.open("a"), await mesh.open("b")
    await node_a.remember(("Alice", "likes", "tea"))
    async with mesh.serve(node_b, "b"):
        assert (await dial(node_a, mesh.peer("b"), until_quiet=True)).error is None
    await dial(node_a, mesh.peer("c"), until_quiet=True)  # c is not serving: an error
    async with api_for(node_a) as api:
        document = (await api.get("/openapi.json")).body
        status = (await api.get("/api/sync/status")).body
    assert_fits(document, "/api/sync/status", "get", status)
    met, never = status["peers"]
    assert met["last_sync_at"] is not None and never["last_sync_at"] is None
    assert never["last_error"] is not None
