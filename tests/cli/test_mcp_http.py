"""The MCP server over streamable HTTP at ``/mcp`` on a real ``feral serve``, driven by the SDK's
own client; the API's guard stands in front of it: a foreign Host is refused on loopback, and off
loopback a request without the token.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from feral.node.mcp.server import TOOL_NAMES

from .servers import FeralNode, Mesh

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"},
    },
}


@asynccontextmanager
async def http_session(url: str, headers: dict[str, str] | None = None) -> AsyncIterator[Any]:
    async with (
        httpx2.AsyncClient(headers=headers or {}, timeout=60) as client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def raw_post(port: int, headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
    """An initialize request as any HTTP client sends it: the status and the JSON answer."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/mcp",
        data=json.dumps(INITIALIZE).encode(),
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **headers,
        },
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, {}
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


async def remember_and_search(port: int) -> str:
    async with http_session(f"http://127.0.0.1:{port}/mcp") as session:
        names = sorted(tool.name for tool in (await session.list_tools()).tools)
        assert names == sorted(TOOL_NAMES)
        stored = await session.call_tool("remember", {"fact": "I live in Porto"})
        assert not stored.is_error, stored.content
        memory_id: str = json.loads(stored.content[0].text)["memory_id"]
        found = await session.call_tool("search", {"query": "Porto"})
        assert [hit["id"] for hit in json.loads(found.content[0].text)["results"]] == [memory_id]
    return memory_id


@pytest.mark.slow
def test_a_client_lists_remembers_and_searches_over_http(mesh: Mesh) -> None:
    (node,) = mesh.add("a")
    mesh.start(node)
    memory_id = asyncio.run(remember_and_search(node.port))
    assert json.loads(node.cli("memory", "get", memory_id, "--json"))["record"]["id"] == memory_id


async def assistant_round(port: int) -> dict[str, Any]:
    """The digest (tool and resource), a logged call and a session's message over HTTP; the
    session read back in a second connection, since ``serve`` holds the buffers by name."""
    url = f"http://127.0.0.1:{port}/mcp"
    async with http_session(url) as session:
        await session.call_tool("remember", {"fact": "todo: water the plants"})
        digest = await session.call_tool("digest", {"topic": "plants"})
        resource = await session.read_resource("feral://digest")
        logged = await session.call_tool("log_tool_call", {"tool": "weather", "session": "c1"})
        appended = await session.call_tool(
            "session_append", {"session": "c1", "role": "user", "content": "I like ferns."}
        )
        assert not (digest.is_error or logged.is_error or appended.is_error)
    async with http_session(url) as session:
        state = await session.call_tool("session_messages", {"session": "c1"})
    return {
        "digest": json.loads(digest.content[0].text),
        "resource": resource.contents[0].text,
        "logged": json.loads(logged.content[0].text),
        "state": json.loads(state.content[0].text),
    }


@pytest.mark.slow
def test_a_client_reads_the_digest_logs_a_call_and_appends_messages_over_http(
    mesh: Mesh,
) -> None:
    (node,) = mesh.add("a")
    mesh.start(node)
    seen = asyncio.run(assistant_round(node.port))
    assert "todo: water the plants" in seen["digest"]["text"]
    assert "todo: water the plants" in seen["resource"]
    assert seen["state"]["messages"] == [{"role": "user", "content": "I like ferns."}]
    listed = json.loads(node.cli("log", "list", "--json"))
    assert [(e["id"], e["tool"], e["session_id"]) for e in listed] == [
        (seen["logged"]["id"], "weather", "c1")
    ]
    node.stop()  # serve held the session's buffer; stopping turns what is left into an episode
    episodes = json.loads(node.cli("memory", "list", "--tier", "episodic", "--json"))
    assert [(e["session_id"], e["summary"]) for e in episodes] == [("c1", "I like ferns.")]


@pytest.mark.slow
def test_a_foreign_host_is_refused(mesh: Mesh) -> None:
    (node,) = mesh.add("a")
    mesh.start(node)
    status, answer = raw_post(node.port, {"Host": "attacker.example"})
    assert (status, answer["error"]["code"]) == (403, "host_refused")
    status, answer = raw_post(node.port, {"Origin": "http://127.0.0.1:1"})
    assert (status, answer["error"]["code"]) == (403, "browser_refused")
    assert raw_post(node.port, {})[0] == 200


def serve_off_loopback(node: FeralNode) -> None:
    """``feral serve`` on every address, in plain HTTP (so the probe needs no certificate)."""
    node.starts += 1
    log = node.logs / f"{node.name}.serve.{node.starts}.log"
    with log.open("wb") as handle:
        node.process = subprocess.Popen(
            node.argv("serve", "--host", "0.0.0.0", "--no-tls", "--port", str(node.port)),
            stdin=subprocess.DEVNULL,
            stdout=handle,
            stderr=subprocess.STDOUT,
            env=node.environment(),
        )
    node.wait_ready()


async def node_id_with_token(port: int, token: str) -> str:
    url = f"http://127.0.0.1:{port}/mcp"
    async with http_session(url, {"Authorization": f"Bearer {token}"}) as session:
        stats = await session.call_tool("stats", {})
        assert not stats.is_error, stats.content
        node_id: str = json.loads(stats.content[0].text)["node_id"]
    return node_id


@pytest.mark.slow
def test_off_loopback_a_missing_token_is_refused(mesh: Mesh) -> None:
    (node,) = mesh.add("a")
    serve_off_loopback(node)
    status, answer = raw_post(node.port, {})
    assert (status, answer["error"]["code"]) == (401, "unauthorized")
    assert raw_post(node.port, {"Authorization": "Bearer wrong-token-0123456789"})[0] == 401
    token = (node.home / "api_token").read_text().strip()
    assert asyncio.run(node_id_with_token(node.port, token)) == node.node_id


def test_serve_imports_the_mcp_sdk_only_when_a_client_first_calls() -> None:
    """The SDK costs over a second of CPU to import: a serve nobody calls on /mcp never pays it."""
    probe = (
        "import sys\n"
        "import feral.cli.main, feral.node.serve.service\n"
        "print(','.join(sorted(m for m in ('mcp', 'pydantic') if m in sys.modules)))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""
