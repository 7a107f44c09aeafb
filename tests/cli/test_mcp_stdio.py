"""``feral mcp`` over stdio, driven by the ``mcp`` SDK's own client as an assistant drives it.

Each client spawns ``feral --home H mcp`` as a real process. Three at once on one home write and
search together: every fact written is found afterwards, and no call fails.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from feral.node.curation.memory_graph import FOLLOW_MODES
from feral.node.mcp.resources import RESOURCES
from feral.node.mcp.server import TOOL_NAMES
from feral.node.settings.limits import SEARCH_STRATEGIES
from feral.storage.memory.listing import LISTED_TIERS, STATUSES
from tests.mcp_answers import assert_specific, call, refusal

from .helpers import feral, feral_command, feral_process, turn_off_embeddings
from .servers import Mesh, pair, wait_until


@asynccontextmanager
async def mcp_session(home: Path) -> AsyncIterator[ClientSession]:
    command = feral_command()
    params = StdioServerParameters(
        command=command[0],
        args=[*command[1:], "--home", str(home), "mcp"],
        env={"PYTHONPATH": os.environ.get("PYTHONPATH", "")},
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def enum_of(schema: dict[str, Any], name: str) -> list[str]:
    """The choices a tool's input schema lists for one argument."""
    field = schema["properties"][name]
    for choice in [field, *field.get("anyOf", [])]:
        if "enum" in choice:
            return list(choice["enum"])
    raise AssertionError(f"{name} lists no choices: {field}")


def assert_choices_documented(tools: dict[str, Any]) -> None:
    """The schemas list the same choices the store checks (so they cannot drift apart)."""
    assert enum_of(tools["get"].input_schema, "follow") == list(FOLLOW_MODES)
    assert sorted(enum_of(tools["list"].input_schema, "tier")) == sorted(LISTED_TIERS)
    assert enum_of(tools["list"].input_schema, "status") == list(STATUSES)
    assert enum_of(tools["search"].input_schema, "strategy") == list(SEARCH_STRATEGIES)


def new_home(tmp_path: Path, name: str = "home") -> Path:
    home = tmp_path / name
    assert feral(home, "init").exit_code == 0
    turn_off_embeddings(home)  # full-text search: no model to load in each process
    return home


@pytest.mark.slow
async def test_a_client_lists_the_tools_remembers_and_searches(tmp_path: Path) -> None:
    home = new_home(tmp_path)
    async with mcp_session(home) as session:
        listed = (await session.list_tools()).tools
        assert sorted(tool.name for tool in listed) == sorted(TOOL_NAMES)
        by_name = {tool.name: tool for tool in listed}
        assert by_name["search"].annotations and by_name["search"].annotations.read_only_hint
        assert by_name["forget"].annotations and by_name["forget"].annotations.destructive_hint
        assert_choices_documented(by_name)
        for tool in listed:
            assert_specific(tool.name, tool.output_schema)
        resources = (await session.list_resources()).resources
        assert sorted(str(r.uri) for r in resources) == sorted(RESOURCES)
        stored = await call(session, "remember", fact="I live in Lisbon")
        assert stored["classification"] == "new" and stored["status"] == "absorbed"
        found = await call(session, "search", query="Lisbon")
        assert [hit["id"] for hit in found["results"]] == [stored["memory_id"]]
        got = await call(session, "get", id=stored["memory_id"], follow="edges")
        assert got["record"]["id"] == stored["memory_id"] and got["edges"] == []
        await call(session, "forget", id=stored["memory_id"])
        assert (await call(session, "search", query="Lisbon"))["results"] == []
        await call(session, "restore", id=stored["memory_id"])
        stats = await call(session, "stats")
        assert stats["node_id"]


@pytest.mark.slow
async def test_bad_arguments_and_secrets_are_tool_errors_not_tracebacks(tmp_path: Path) -> None:
    home = new_home(tmp_path)
    async with mcp_session(home) as session:
        assert "top_k" in await refusal(session, "search", query="x", top_k=0)
        assert "not both" in await refusal(session, "remember", fact="a", subject="b")
        assert "not_found" in await refusal(session, "forget", id="no-such-memory")
        message = await refusal(session, "get", id="x", follow="all")
        assert "follow" in message and "'none', 'edges' or 'full_history'" in message
        secret = "my password is hunter2-Zq8#xv!Lp"
        message = await refusal(session, "remember", subject="user", predicate="password",
                                object=secret)  # fmt: skip
        assert "secret" in message and secret not in message
        assert "Traceback" not in message
    listed = feral_process(home, "memory", "list", "--json")
    assert json.loads(listed.stdout) == []


async def _writer(home: Path, number: int, facts: int) -> list[str]:
    """One client writing its facts, searching for each of the others' as it goes."""
    written = []
    async with mcp_session(home) as session:
        for index in range(facts):
            answer = await call(session, "remember", subject=f"client{number}", predicate="noted",
                                object=f"item{number}x{index}")  # fmt: skip
            written.append(answer["memory_id"])
            await call(session, "search", query=f"item{(number + 1) % 3}x{index}")
            await call(session, "log_tool_call", tool="search", session=f"client{number}")
    return written


@pytest.mark.slow
async def test_three_clients_on_one_home_lose_nothing(tmp_path: Path) -> None:
    home = new_home(tmp_path)
    facts = 15
    written = await asyncio.gather(*(_writer(home, number, facts) for number in range(3)))
    ids = {memory_id for batch in written for memory_id in batch}
    assert len(ids) == 3 * facts
    async with mcp_session(home) as session:
        for number in range(3):
            for index in range(facts):
                found = await call(session, "search", query=f"item{number}x{index}")
                assert found["results"], f"item{number}x{index} lost"
        listed = await call(session, "list", tier="semantic", limit=1000)
        logged = await call(session, "log_list", limit=1000)
    assert {row["id"] for row in listed["memories"]} == ids
    assert len(logged["entries"]) == 3 * facts


def test_a_missing_home_is_one_line_on_stderr_and_nothing_created(tmp_path: Path) -> None:
    result = feral_process(tmp_path / "typo", "mcp")
    assert result.returncode == 1
    assert result.stderr == f"Error: no feral home at {tmp_path / 'typo'}; run `feral init`\n"
    assert result.stdout == "" and not (tmp_path / "typo").exists()


async def _remember_once(home: Path, fact: str) -> None:
    async with mcp_session(home) as session:
        await call(session, "remember", fact=fact)


@pytest.mark.slow
def test_a_running_serve_pushes_what_a_client_writes_to_its_peers(mesh: Mesh) -> None:
    laptop, phone = mesh.add("laptop", "phone")
    pair(laptop, phone, dial=True)
    pair(phone, laptop, dial=False)
    mesh.start(laptop, phone)
    asyncio.run(_remember_once(laptop.home, "my locker is number 42"))
    arrived = wait_until(lambda: "number 42" in phone.export(), 30, interval=0.1)
    assert arrived, "the fact written through feral mcp did not reach the peer"


async def _assistant_round(home: Path) -> dict[str, Any]:
    """What an assistant does around a conversation: read the digest (tool and resource), log
    a tool call, append the conversation's messages."""
    async with mcp_session(home) as session:
        await call(session, "remember", fact="todo: book the dentist")
        digest = await call(session, "digest", topic="dentist")
        resource = await session.read_resource("feral://digest")
        logged = await call(session, "log_tool_call", tool="calendar", session="chat-1",
                            args={"day": "monday"}, latency_ms=40)  # fmt: skip
        await call(session, "session_append", session="chat-1", role="user",
                   content="My dentist is Dr. Silva.")  # fmt: skip
        state = await call(session, "session_messages", session="chat-1")
    return {"digest": digest, "resource": resource, "logged": logged, "state": state}


@pytest.mark.slow
async def test_a_client_reads_the_digest_logs_a_call_and_appends_messages(tmp_path: Path) -> None:
    home = new_home(tmp_path)
    seen = await _assistant_round(home)
    assert "todo: book the dentist" in seen["digest"]["text"]
    assert seen["resource"].contents[0].text.startswith("<memory-context>")
    assert "todo: book the dentist" in seen["resource"].contents[0].text
    assert seen["state"]["messages"] == [{"role": "user", "content": "My dentist is Dr. Silva."}]
    listed = json.loads(feral_process(home, "log", "list", "--json").stdout)
    assert [(e["id"], e["tool"], e["session_id"]) for e in listed] == [
        (seen["logged"]["id"], "calendar", "chat-1")
    ]
    # The client closed: what was left of the session became an episode, its fact remembered.
    episodes = json.loads(feral_process(home, "memory", "list", "--tier", "episodic",
                                        "--json").stdout)  # fmt: skip
    assert [e["session_id"] for e in episodes] == ["chat-1"]
    found = json.loads(feral_process(home, "memory", "search", "Silva", "--json").stdout)
    assert {hit["tier"] for hit in found["results"]} == {"episodic", "semantic"}
