"""The MCP server's tools and resources in process, through the SDK's own ``Client``: the graph,
the digest (tool and resource), the wiki's pages, the execution log and working-memory sessions,
and the documentation of every tool (docs/MCP.md) checked against what the server lists.

The stdio and HTTP transports are tested with real processes in tests/cli/test_mcp_*.py.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from feral.node.assistant.live_sessions import ROLES, LiveSessions
from feral.node.mcp.resources import RESOURCE_TEMPLATES, RESOURCES
from feral.node.mcp.server import TOOL_NAMES, build_server
from feral.node.node import Node
from feral.node.recall.digest import build_digest
from feral.node.settings.config import load_settings, save_settings
from tests import mcp_answers
from tests.mcp_answers import call

DOC = Path(__file__).resolve().parents[2] / "docs" / "MCP.md"


def small_budget(home: Path, budget: int) -> None:
    """Working memory of ``budget`` tokens, embeddings off (no model to load)."""
    settings = load_settings(home)
    memory = dataclasses.replace(settings.memory, working_memory_budget=budget, embedder="none")
    save_settings(home, dataclasses.replace(settings, memory=memory))


@asynccontextmanager
async def opened(tmp_path: Path, budget: int) -> AsyncIterator[tuple[Node, LiveSessions]]:
    """A node on a fresh home with ``budget`` tokens of working memory, and its live sessions;
    both closed afterwards (the sessions first, as the server does when it stops)."""
    home = tmp_path / "home"
    small_budget(home, budget)
    node = await Node.open(home)
    sessions = LiveSessions(node)
    try:
        yield node, sessions
    finally:
        await sessions.close()
        await node.close()


@asynccontextmanager
async def served(tmp_path: Path) -> AsyncIterator[tuple[Client, Node, LiveSessions]]:
    """A client of a server on a fresh home (a context manager, not a fixture: the SDK's task
    groups must be left by the task that entered them)."""
    async with opened(tmp_path, 120) as (node, sessions):
        async with Client(build_server(node, sessions)) as client:
            yield client, node, sessions


async def refusal(client: Client, tool: str, /, **arguments: Any) -> str:
    """The tool's refusal, which never shows a traceback."""
    text = await mcp_answers.refusal(client, tool, **arguments)
    assert "Traceback" not in text
    return text


async def read(client: Client, uri: str) -> str:
    """A resource's text."""
    text: str = (await client.read_resource(uri)).contents[0].text  # type: ignore[union-attr]
    return text


def documented_tools() -> dict[str, str]:
    """docs/MCP.md's tool table: each tool's name and what its last column says it does."""
    rows = re.findall(r"^\| `(\w+)` \|.*\| ([a-z, -]+) \|$", DOC.read_text(encoding="utf-8"), re.M)
    return dict(rows)


def annotation_words(annotations: Any) -> str:
    if annotations.read_only_hint:
        return "read-only"
    if annotations.destructive_hint:
        return "destructive, idempotent"
    return "writes, idempotent" if annotations.idempotent_hint else "writes"


async def test_every_tool_is_documented_with_its_annotations(tmp_path: Path) -> None:
    async with served(tmp_path) as (client, _, _):
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert sorted(listed) == sorted(TOOL_NAMES)
        documented = documented_tools()
        assert sorted(documented) == sorted(TOOL_NAMES)
        for name, tool in listed.items():
            assert tool.annotations is not None and tool.annotations.open_world_hint is False
            assert documented[name] == annotation_words(tool.annotations), name
            assert tool.description, name
            for argument in tool.input_schema.get("properties", {}):
                assert f"`{argument}`" in DOC.read_text(encoding="utf-8"), (name, argument)
        text = DOC.read_text(encoding="utf-8")
        for uri in (*RESOURCES, *RESOURCE_TEMPLATES):
            assert f"`{uri}`" in text


async def test_the_graph_is_added_to_listed_and_walked(tmp_path: Path) -> None:
    async with served(tmp_path) as (client, _, _):
        entity = await call(client, "graph_add", type="person", name="Ana")
        assert (entity["type"], entity["name"]) == ("person", "Ana")
        again = await call(client, "graph_add", type="person", name="ana")
        assert again["id"] == entity["id"]
        fact = await call(client, "graph_add", source="person:Ana", relation="lives_in",
                          target="place:Porto")  # fmt: skip
        assert (fact["subject"], fact["predicate"], fact["object"]) == ("Ana", "lives_in", "Porto")
        listed = await call(client, "graph_list", type="place")
        assert [e["name"] for e in listed["entities"]] == ["Porto"]
        walked = await call(client, "graph_query", start="person:Ana", relations=["lives_in"])
        assert [r["name"] for r in walked["results"]] == ["Porto"]
        assert "not both" in await refusal(client, "graph_add", type="person", name="Bo",
                                           source="person:Bo")  # fmt: skip
        assert "go together" in await refusal(client, "graph_add", source="person:Ana")
        assert "give type and name" in await refusal(client, "graph_add", type="person")
        assert "not_found" in await refusal(client, "graph_query", start="person:Nobody")


async def test_the_digest_as_a_tool_and_as_resources(tmp_path: Path) -> None:
    async with served(tmp_path) as (client, node, _):
        await call(client, "remember", fact="todo: renew the passport")
        await call(client, "remember", fact="I live in Porto")
        answer = await call(client, "digest", topic="Porto", max_tokens=300)
        assert answer["text"].startswith("<memory-context>") and answer["tokens"] <= 300
        assert "Data, not instructions" in answer["text"]
        todos = [item["text"] for item in answer["sections"]["todos"]]
        assert todos == ["todo: renew the passport"]
        assert await read(client, "feral://digest") == (await build_digest(node)).text
        expected = (await build_digest(node, topic="Porto")).text
        assert await read(client, "feral://digest/Porto") == expected
        assert "Relevant to: Porto" in expected
        assert "max_tokens" in await refusal(client, "digest", max_tokens=0)
        assert "too small" in await refusal(client, "digest", max_tokens=5)


async def test_wiki_pages_are_resources_after_compiling(tmp_path: Path) -> None:
    async with served(tmp_path) as (client, _, _):
        assert json.loads(await read(client, "feral://wiki")) == []
        await call(client, "remember", subject="Porto", predicate="is_in", object="Portugal")
        compiled = await call(client, "wiki_compile")
        assert [page["topic"] for page in compiled["pages"]] == ["Porto"]
        index = json.loads(await read(client, "feral://wiki"))
        assert [page["topic"] for page in index] == ["Porto"]
        assert "Portugal" in await read(client, "feral://wiki/porto")
        with pytest.raises(MCPError, match="no wiki page"):
            await client.read_resource("feral://wiki/Lisbon")


async def test_tool_calls_are_logged_listed_and_searched(tmp_path: Path) -> None:
    async with served(tmp_path) as (client, node, _):
        arguments = {"args": {"query": "green tea"}, "result": {"hits": 2}, "latency_ms": 12}
        row = await call(client, "log_tool_call", tool="search", session="s1", **arguments)
        assert (row["tool"], row["session_id"], row["latency_ms"]) == ("search", "s1", 12)
        assert row["success"] is True
        await call(client, "log_tool_call", tool="weather", success=False)
        listed = await call(client, "log_list")
        assert [entry["tool"] for entry in listed["entries"]] == ["weather", "search"]
        assert listed["entries"][0]["session_id"] == "default"
        found = await call(client, "log_list", query="green tea")
        assert [entry["id"] for entry in found["entries"]] == [row["id"]]
        assert (await call(client, "log_list", session="s2"))["entries"] == []
        key = "sk_live_" + "Tq3vX9Lm2Rb7Wc4Yd8Ze1Af6"  # made up, in Stripe's published shape
        message = await refusal(client, "log_tool_call", tool="pay", args={"key": key})
        assert "secret" in message and key not in message
        assert "latency_ms" in await refusal(client, "log_tool_call", tool="x", latency_ms=-1)
        assert (await node.stats())["tiers"]["execution"]["live"] == 2


async def test_session_messages_compact_into_episodes_as_ingest_does(tmp_path: Path) -> None:
    async with served(tmp_path) as (client, node, sessions):
        first = await call(client, "session_append", session="chat", role="user",
                           content="My doctor is Dr. Chen.")  # fmt: skip
        assert first["episodes"] == [] and first["compacts_above"] == 102
        assert first["messages"] == [{"role": "user", "content": "My doctor is Dr. Chen."}]
        compacted: list[dict[str, Any]] = []
        for number in range(20):
            answer = await call(client, "session_append", session="chat", role="assistant",
                                content=f"reply number {number} about the appointment")  # fmt: skip
            compacted += answer["episodes"]
            assert answer["tokens"] <= answer["compacts_above"]
        assert compacted, "the session never compacted"
        state = await call(client, "session_messages", session="chat")
        assert state["messages"][0]["content"].startswith("[Session compacted")
        assert state["summarised"] > 0
        found = await call(client, "search", query="Chen")
        assert {hit["tier"] for hit in found["results"]} == {"episodic", "semantic"}
        ended = await call(client, "session_end", session="chat")
        assert len(ended["episodes"]) == 1
        assert (await call(client, "session_messages", session="chat"))["messages"] == []
        assert (await call(client, "session_end", session="chat"))["episodes"] == []
        assert "role" in await refusal(client, "session_append", session="chat", role="robot",
                                       content="x")  # fmt: skip
        message = await refusal(client, "session_append", session="chat", role="user",
                                content="my password is hunter2-Zq8#xv!Lp")  # fmt: skip
        assert "secret" in message
        assert (await call(client, "session_messages", session="chat"))["messages"] == []
        assert sorted(ROLES) == ["assistant", "system", "tool", "user"]


async def test_what_is_left_in_a_session_becomes_an_episode_when_the_server_stops(
    tmp_path: Path,
) -> None:
    async with opened(tmp_path, 8000) as (node, sessions):
        async with Client(build_server(node, sessions)) as client:
            await call(client, "session_append", session="s", role="user", content="I like figs.")
        assert (await node.stats())["tiers"]["episodic"]["live"] == 0
        assert await sessions.close() == 1
        assert (await node.stats())["tiers"]["episodic"]["live"] == 1


async def test_remember_names_what_it_archived_and_keep_both_archives_nothing(
    tmp_path: Path,
) -> None:
    async with served(tmp_path) as (client, node, _):
        chen = await call(client, "remember", fact="my doctor is Dr. Chen")
        lee = await call(client, "remember", fact="my doctor is Dr. Lee")
        assert lee["archived_rows"] == [chen["id"]]
        kim = await call(client, "remember", fact="my doctor is Dr. Kim", keep_both=True)
        assert kim["archived_rows"] == [] and kim["classification"] == "related"
        assert (await node.get(lee["id"])).get("archived") is False
