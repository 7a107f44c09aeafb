"""Every MCP tool advertises the schema of its answer (``outputSchema``), made from the answer's
type (node/answers.py) as the OpenAPI document's are, and what each tool answers validates
against it: checked through the SDK's own ``Client``, every tool called with real arguments on
a real home.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, TypedDict

import jsonschema  # type: ignore[import-untyped]  # no stubs installed
import pytest
from mcp import Client
from pydantic import TypeAdapter

from feral.node.answers import EntityRow, FactRow, StatsAnswer
from feral.node.api.schema import openapi_document
from feral.node.mcp.outputs import output_schema, structured
from feral.node.mcp.server import TOOL_NAMES
from tests.mcp_answers import assert_specific

from .test_mcp_tools import served


class CheckedCalls:
    """Calls tools through ``client``, checking each answer against the tool's listed schema."""

    def __init__(self, client: Client, schemas: dict[str, dict[str, Any]]) -> None:
        self.client = client
        self.schemas = schemas
        self.answers: dict[str, list[dict[str, Any]]] = {}

    async def __call__(self, tool: str, /, **arguments: Any) -> Any:
        result = await self.client.call_tool(tool, arguments)
        assert not result.is_error, result.content
        answer = result.structured_content
        assert answer == json.loads(result.content[0].text)  # type: ignore[union-attr]
        jsonschema.Draft202012Validator(self.schemas[tool]).validate(answer)
        self.answers.setdefault(tool, []).append(answer)
        return answer


async def memory_tools(call: CheckedCalls) -> None:
    chen = await call("remember", fact="my doctor is Dr. Chen")
    lee = await call("remember", fact="my doctor is Dr. Lee. I live in Porto and I like figs")
    fact = await call("remember", subject="Porto", predicate="is_in", object="Portugal")
    await call("search", query="doctor Porto", strategy="fts")
    await call("get", id=lee["id"], follow="full_history")
    await call("get", id=chen["id"], follow="edges")
    await call("list", status="all")
    await call("forget", id=fact["id"])
    await call("restore", id=fact["id"])
    await call("boost", id=fact["id"], importance=2.5, reason="asked often")
    await call("link", from_id=fact["id"], to_id=lee["id"], type="related_to", note="both")


async def assistant_tools(call: CheckedCalls) -> None:
    await call("digest", topic="Porto", max_tokens=300)
    await call("log_tool_call", tool="search", args={"q": "figs"}, result=[1], latency_ms=3)
    await call("log_list")
    await call("log_list", query="figs")
    for number in range(12):
        await call("session_append", session="chat", role="user",
                   content=f"message {number} about the trip to Porto")  # fmt: skip
    await call("session_messages", session="chat")
    await call("session_end", session="chat")


async def graph_tools(call: CheckedCalls) -> None:
    await call("graph_add", type="person", name="Ana")
    await call("graph_add", source="person:Ana", relation="lives_in", target="place:Porto")
    await call("graph_list")
    await call("graph_query", start="person:Ana", direction="both", hops=2)
    await call("wiki_compile")
    await call("stats")
    await call("sync_status")


async def test_every_tool_advertises_its_answer_and_answers_what_it_advertises(
    tmp_path: Path,
) -> None:
    async with served(tmp_path) as (client, _, _):
        listed = {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}
        assert sorted(listed) == sorted(TOOL_NAMES)
        for name, schema in listed.items():
            assert_specific(name, schema)
        call = CheckedCalls(client, {name: schema or {} for name, schema in listed.items()})
        await memory_tools(call)
        await assistant_tools(call)
        await graph_tools(call)
        assert sorted(call.answers) == sorted(TOOL_NAMES)
        assert any("clauses" in answer for answer in call.answers["remember"])
        assert any(answer["episodes"] for answer in call.answers["session_append"])
        for name, answers in call.answers.items():
            assert_a_key_taken_out_is_refused(name, listed[name] or {}, answers[-1])


def assert_a_key_taken_out_is_refused(name: str, schema: dict[str, Any], answer: Any) -> None:
    """The schema is not one every object meets: the answer without a key it requires fails."""
    shapes = schema.get("anyOf", [schema])
    broken = copy.deepcopy(answer)
    key = next(key for key in broken if all(key in shape["required"] for shape in shapes))
    del broken[key]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate(broken)


def resolved(schema: object, components: dict[str, Any]) -> Any:
    """``schema`` with every ``$ref`` into the OpenAPI document's components replaced by it."""
    if isinstance(schema, list):
        return [resolved(item, components) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        return resolved(components[schema["$ref"].rsplit("/", 1)[1]], components)
    return {key: resolved(value, components) for key, value in schema.items()}


SAME_AS_THE_API = {
    "stats": ("/api/memory/stats", "get"),
    "boost": ("/api/memory/boost", "post"),
    "sync_status": ("/api/sync/status", "get"),
    "graph_query": ("/api/graph/query", "post"),
    "search": ("/api/memory/search", "post"),
    "remember": ("/api/memory/remember", "post"),
}
"""Tools answering what an API route answers (episodes among them: both answer an episode's
``entities`` as a list)."""


async def test_a_tool_answering_as_a_route_advertises_the_routes_schema(tmp_path: Path) -> None:
    document = openapi_document()
    components = document["components"]["schemas"]
    async with served(tmp_path) as (client, _, _):
        listed = {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}
    for tool, (path, method) in SAME_AS_THE_API.items():
        content = document["paths"][path][method]["responses"]["200"]["content"]
        assert listed[tool] == resolved(content["application/json"]["schema"], components), tool


class _Looped(TypedDict):
    name: str
    inside: list[_Looped]


def test_a_choice_of_answers_is_an_object_and_a_type_holding_itself_is_refused() -> None:
    chosen = output_schema(EntityRow | FactRow)
    assert chosen["type"] == "object"
    assert [shape["title"] for shape in chosen["anyOf"]] == ["EntityRow", "FactRow"]  # type: ignore[attr-defined]
    assert "$ref" not in json.dumps(chosen)
    with pytest.raises(TypeError, match="_Looped holds itself"):
        output_schema(_Looped)


def test_an_answer_passes_through_unchanged() -> None:
    answer = {"count": 1, "share": 1.0, "none": None, "rows": [{"extra": "kept", "n": 2}]}
    shown = TypeAdapter(structured(StatsAnswer))
    dumped = shown.dump_python(shown.validate_python(answer), mode="json")
    assert json.dumps(dumped) == json.dumps(answer)
    assert shown.json_schema()["title"] == "StatsAnswer"


NAMES = {"type": "array", "items": {"type": "string"}}
"""The schema of an episode's ``entities`` in an answer: a list of names."""


def episode_shapes(schema: Any) -> list[Any]:
    """Every object shape in ``schema`` that describes an episode (a summary and entities)."""
    if isinstance(schema, list):
        return [shape for item in schema for shape in episode_shapes(item)]
    if not isinstance(schema, dict):
        return []
    properties = schema.get("properties")
    is_episode = isinstance(properties, dict) and {"summary", "entities"} <= set(properties)
    found = [schema] if is_episode else []
    return found + [shape for value in schema.values() for shape in episode_shapes(value)]


async def test_an_episodes_entities_are_answered_and_advertised_as_a_list_of_names(
    tmp_path: Path,
) -> None:
    """An episode keeps its entities as JSON text (what replicates); a tool answers the list
    that text holds, as the API and ``--json`` do, and advertises it as a list of strings."""
    async with served(tmp_path) as (client, node, _):
        episode = await node.add_episode("chat", "Ana moved to Porto", ["Ana", "Porto"])
        listed = {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}
        got = (await client.call_tool("get", {"id": episode["id"]})).structured_content
        memories = (await client.call_tool("list", {"tier": "episodic"})).structured_content
    assert got is not None and memories is not None
    assert got["record"]["entities"] == ["Ana", "Porto"]
    assert [m["entities"] for m in memories["memories"]] == [["Ana", "Porto"]]
    for tool in ("get", "list"):
        shapes = episode_shapes(listed[tool])
        assert shapes, tool
        assert all(shape["properties"]["entities"] == NAMES for shape in shapes), tool
