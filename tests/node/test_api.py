"""The HTTP API (node/api/) served by a real uvicorn on loopback, called with urllib.

Every test runs ``feral serve``'s own app (:class:`feral.node.serve.service.SyncService`) on a free
127.0.0.1 port inside the test's event loop; the blocking client runs in a thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import stat
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import msgspec
import pytest
from starlette.routing import Route
from websockets.asyncio.client import connect

from feral.cli.main import cli
from feral.node.api import (
    API_TOKEN_FILE,
    MAX_BODY_BYTES,
    OPENAPI,
    EpisodesQuery,
    RememberRequest,
    is_loopback_host,
    load_or_create_api_token,
)
from feral.node.api.json_shapes import readable
from feral.node.clock_mark import MARK_FILE
from feral.node.node import Node
from feral.node.recall.search import SearchRequest
from feral.node.serve.service import SyncService
from feral.node.settings.config import settings_from_dict
from feral.node.settings.limits import (
    DEFAULT_EPISODES,
    FRACTION_RANGE,
    MAX_EPISODES,
    MAX_QUERY_CHARS,
    MAX_TOP_K,
    MIN_TOP_K,
    SEARCH_STRATEGIES,
)
from feral.storage.encoders.embedders import DEFAULT_EMBEDDER, load_embedder
from feral.sync.errors import ConfigError, HomeFileError
from tests.cli.helpers import feral

from .support import HOST, WAIT_S, Mesh, free_port, turn_off_embeddings

TOKEN = "t0k3n-for-tests-" + "x" * 24
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never a proxy


@dataclass
class Answer:
    status: int
    headers: Mapping[str, str]
    body: Any


@dataclass
class Api:
    """A client for one running service."""

    base: str
    service: SyncService

    async def call(
        self,
        method: str,
        path: str,
        body: object = None,
        *,
        raw: bytes | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Answer:
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        return await asyncio.to_thread(self._call, method, path, data, dict(headers or {}))

    def _call(self, method: str, path: str, data: bytes | None, headers: dict[str, str]) -> Answer:
        request = urllib.request.Request(self.base + path, data, headers, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with OPENER.open(request, timeout=WAIT_S) as response:
                return Answer(response.status, response.headers, json.loads(response.read()))
        except urllib.error.HTTPError as error:
            with error:
                return Answer(error.code, error.headers, json.loads(error.read()))

    async def post(self, path: str, body: object = None, **kwargs: Any) -> Answer:
        return await self.call("POST", path, body, **kwargs)

    async def get(self, path: str, **kwargs: Any) -> Answer:
        return await self.call("GET", path, **kwargs)


@contextlib.asynccontextmanager
async def api_for(node: Node, **kwargs: Any) -> AsyncIterator[Api]:
    """Serve ``node`` (as ``feral serve`` does) on a free loopback port until the block ends."""
    port = free_port()
    service = SyncService(node, HOST, port, **kwargs)
    ready = asyncio.Event()
    task = asyncio.create_task(service.run(ready.set))
    waiting = asyncio.create_task(ready.wait())
    try:
        await asyncio.wait({task, waiting}, timeout=WAIT_S, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            task.result()
        assert ready.is_set(), "the service did not start"
        yield Api(f"http://{HOST}:{port}", service)
    finally:
        waiting.cancel()
        if service.server is not None:
            service.server.should_exit = True
        await asyncio.wait_for(task, WAIT_S)


def error_code(answer: Answer) -> str:
    assert set(answer.body) == {"error"}, answer.body
    assert set(answer.body["error"]) == {"code", "message"}
    assert answer.body["error"]["message"]
    assert answer.headers["content-type"] == "application/json"
    return str(answer.body["error"]["code"])


async def assert_still_serving(api: Api) -> None:
    answer = await api.post("/api/memory/search", {"query": "anything"})
    assert answer.status == 200, answer.body


# Happy paths


async def test_search_answers_the_documented_shape(api: Api, node: Node):
    doctor = await node.remember(("user", "note", "my doctor is Dr. Chen"))
    await node.remember(("user", "note", "the dog likes the park"))
    answer = await api.post("/api/memory/search", {"query": "doctor", "strategy": "fts"})
    assert answer.status == 200
    assert set(answer.body) >= {"results", "total", "query_time_ms"}
    assert answer.body["total"] == 1
    (hit,) = answer.body["results"]
    assert set(hit) >= {"id", "tier", "content", "score", "fts_score", "vector_score"}
    assert (hit["id"], hit["tier"], hit["content"]) == (
        doctor["id"],
        "semantic",
        "user note my doctor is Dr. Chen",
    )


async def test_search_takes_every_option_and_answers_like_node_search(api: Api, node: Node):
    for n in range(5):
        await node.remember(("pet", "is named", f"dog number {n}"))
    body = {"query": "dog", "top_k": 2, "strategy": "hybrid", "alpha": 0.3, "mmr": False,
            "mmr_lambda": 0.9}  # fmt: skip
    answer = await api.post("/api/memory/search", body)
    assert answer.status == 200
    expected = (await node.search("dog", top_k=2, strategy="hybrid", alpha=0.3)).as_dict()
    assert answer.body["total"] == 2
    assert answer.body["results"] == expected["results"]
    assert {k: v for k, v in answer.body.items() if k != "query_time_ms"} == {
        k: v for k, v in expected.items() if k != "query_time_ms"
    }
    nulls = await api.post("/api/memory/search", {"query": "dog", "top_k": None, "mmr": None})
    assert nulls.status == 200  # null means "the default", like an absent field


async def test_search_answers_exactly_what_the_cli_prints_with_json(api: Api, node: Node):
    await node.remember(("user", "note", "my doctor is Dr. Chen"))
    await node.add_episode("s1", "booked the doctor for Tuesday", ["Dr. Chen"])
    answer = await api.post("/api/memory/search", {"query": "doctor", "strategy": "fts"})
    printed = await asyncio.to_thread(
        feral, node.home, "memory", "search", "doctor", "--strategy", "fts", "--json"
    )
    assert printed.exit_code == 0, printed.output
    cli = json.loads(printed.stdout)
    assert set(cli) == set(answer.body)
    assert [set(hit) for hit in cli["results"]] == [set(hit) for hit in answer.body["results"]]
    del cli["query_time_ms"], answer.body["query_time_ms"]
    assert cli == answer.body


ABSORB_FIELDS = (
    "status",
    "memory_id",
    "classification",
    "edges_created",
    "duplicates_merged",
    "written",
    "merged_into",
    "archived_rows",
)


def stored_row(answer: dict[str, object]) -> dict[str, object]:
    """The row's own fields of a remember answer (which also says how it was absorbed)."""
    return {k: v for k, v in answer.items() if k not in (*ABSORB_FIELDS, "edges")}


async def test_remember_a_fact_answers_the_row_the_cli_would_print(api: Api, node: Node):
    answer = await api.post("/api/memory/remember", {"fact": "my doctor is Dr. Chen"})
    assert answer.status == 200
    assert answer.body["id"]
    assert stored_row(answer.body) == await node.get(answer.body["id"])
    assert (answer.body["status"], answer.body["classification"]) == ("absorbed", "new")
    printed = await asyncio.to_thread(
        feral, node.home, "memory", "remember", "my doctor is Dr. Chen", "--json"
    )
    again = json.loads(printed.stdout)  # the same phrasing rules, the same row: a duplicate
    assert stored_row(again) == stored_row(answer.body)
    assert (again["classification"], again["duplicates_merged"]) == ("duplicate", 1)
    note = await api.post("/api/memory/remember", {"fact": "  buy oat milk  "})
    assert (note.body["subject"], note.body["predicate"], note.body["object"]) == (
        "user",
        "note",
        "buy oat milk",
    )


async def test_remember_a_triple_answers_the_row_the_cli_would_print(api: Api, node: Node):
    triple = {"subject": "Alice", "predicate": "birthday", "object": "May 4"}
    answer = await api.post("/api/memory/remember", triple)
    assert answer.status == 200
    assert {k: answer.body[k] for k in triple} == triple
    assert stored_row(answer.body) == await node.get(answer.body["id"])
    printed = await asyncio.to_thread(
        feral, node.home, "memory", "remember", "--subject", "Alice", "--predicate", "birthday",
        "--object", "May 4", "--json",
    )  # fmt: skip
    assert stored_row(json.loads(printed.stdout)) == stored_row(answer.body)


async def test_absorb_answers_what_the_pipeline_did(api: Api, node: Node):
    first = await api.post("/api/absorb", {"fact": "my doctor is Dr. Chen"})
    assert first.status == 200
    assert {k: first.body[k] for k in ABSORB_FIELDS} == {
        "status": "absorbed",
        "memory_id": first.body["id"],
        "classification": "new",
        "edges_created": 0,
        "duplicates_merged": 0,
        "written": True,
        "merged_into": None,
        "archived_rows": [],
    }
    later = await api.post("/api/absorb", {"fact": "my doctor is now Dr. Lee"})
    assert (later.body["classification"], later.body["edges_created"]) == ("supersede", 1)
    assert later.body["edges"][0]["to_id"] == first.body["id"]
    assert later.body["archived_rows"] == [first.body["id"]]  # named, so it can be restored
    assert (await node.get(first.body["id"]))["archived"] is True
    empty = await api.post("/api/absorb", {"fact": "   "})
    assert empty.status == 422 and error_code(empty) == "invalid_request"
    both = await api.post("/api/absorb", {"fact": "x", "subject": "a"})
    assert both.status == 422


async def test_remember_keep_both_writes_what_would_be_merged_or_superseded(api: Api, node: Node):
    first = await api.post("/api/memory/remember", {"fact": "my doctor is Dr. Chen"})
    kept = await api.post(
        "/api/memory/remember", {"fact": "my doctor is Dr. Lee", "keep_both": True}
    )
    assert kept.status == 200 and kept.body["classification"] == "related"
    assert kept.body["archived_rows"] == [] and kept.body["written"] is True
    assert (await node.get(first.body["id"]))["archived"] is False
    both = await api.post("/api/memory/remember", {"fact": "I live in Paris and I like jazz"})
    assert [c["predicate"] for c in both.body["clauses"]] == ["lives_in", "likes"]


async def test_episodes_lists_the_newest_with_a_limit(api: Api, node: Node):
    for n in range(3):
        await node.add_episode("s1", f"episode {n}", [])
    answer = await api.get("/api/memory/episodes?limit=2")
    assert answer.status == 200
    assert answer.body == readable(await node.episodes(2))  # entities as an array
    assert len(answer.body) == 2
    default = await api.get("/api/memory/episodes")
    assert len(default.body) == 3


async def test_stats_and_sync_status_answer_what_the_cli_prints(api: Api, node: Node):
    await node.remember(("user", "note", "hello"))
    stats = await api.get("/api/memory/stats")
    assert stats.status == 200
    assert stats.body == await node.stats()
    status = await api.get("/api/sync/status")
    assert status.status == 200
    assert status.body["node_id"] == node.node_id
    assert status.body["state_digest"] == await node.state_digest()
    assert status.body["peers"] == []


async def test_the_wiki_lists_topics_and_serves_pages(api: Api, node: Node):
    assert (await api.get("/api/memory/wiki")).body == []  # nothing compiled yet
    await node.remember(("Alice", "birthday", "May 4"))
    await node.compile_wiki()
    topics = await api.get("/api/memory/wiki")
    assert topics.status == 200
    assert topics.body == await node.wiki_topics()
    assert "Alice" in [t["topic"] for t in topics.body]
    page = await api.get("/api/memory/wiki/alice")
    assert page.status == 200
    assert page.body == {"topic": "alice", "markdown": await node.wiki_page("Alice")}
    assert "May 4" in page.body["markdown"]
    for topic in ("nothing-here", "..", "%2E%2E%2Fsettings.json"):
        missing = await api.get(f"/api/memory/wiki/{topic}")
        assert (missing.status, error_code(missing)) == (404, "not_found"), topic


async def test_openapi_describes_every_route(api: Api):
    answer = await api.get("/openapi.json")
    assert answer.status == 200
    assert answer.body == OPENAPI
    assert answer.body["openapi"].startswith("3.1")
    routes = [r for r in api.service.app.routes if isinstance(r, Route)]
    assert len(routes) >= 8
    for route in routes:
        assert route.path in answer.body["paths"], route.path
        for method in (route.methods or set()) - {"HEAD"}:
            assert method.lower() in answer.body["paths"][route.path], (method, route.path)
    assert set(answer.body["paths"]) == {r.path for r in routes}


def test_the_documents_request_schemas_are_the_structures_schemas():
    _, components = msgspec.json.schema_components(
        (SearchRequest, RememberRequest), ref_template="#/components/schemas/{name}"
    )
    schemas = OPENAPI["components"]["schemas"]
    search = json.loads(json.dumps(components["SearchRequest"]))
    assert schemas["SearchRequest"] == search
    remember = {k: v for k, v in schemas["RememberRequest"].items() if k != "oneOf"}
    assert remember == json.loads(json.dumps(components["RememberRequest"]))
    (limit,) = OPENAPI["paths"]["/api/memory/episodes"]["get"]["parameters"]
    _, query = msgspec.json.schema_components((EpisodesQuery,))
    assert limit["schema"] == query["EpisodesQuery"]["properties"]["limit"]


def test_every_limit_in_the_document_is_the_one_the_cli_and_settings_use():
    search = OPENAPI["components"]["schemas"]["SearchRequest"]["properties"]
    (top_k, _null) = search["top_k"]["anyOf"]
    assert (top_k["minimum"], top_k["maximum"]) == (MIN_TOP_K, MAX_TOP_K)
    assert search["query"]["maxLength"] == MAX_QUERY_CHARS
    assert search["strategy"]["anyOf"][0]["enum"] == sorted(SEARCH_STRATEGIES)
    for name in ("alpha", "mmr_lambda"):
        bounds = search[name]["anyOf"][0]
        assert (bounds["minimum"], bounds["maximum"]) == FRACTION_RANGE
    (limit,) = OPENAPI["paths"]["/api/memory/episodes"]["get"]["parameters"]
    assert (limit["schema"]["maximum"], limit["schema"]["default"]) == (
        MAX_EPISODES,
        DEFAULT_EPISODES,
    )
    memory = cli.get_command(click.Context(cli), "memory")
    assert isinstance(memory, click.Group)
    search = memory.get_command(click.Context(memory), "search")
    assert search is not None
    options = {p.name: p for p in search.params}
    assert (options["top_k"].type.min, options["top_k"].type.max) == (MIN_TOP_K, MAX_TOP_K)
    assert tuple(options["strategy"].type.choices) == SEARCH_STRATEGIES
    episodes_command = memory.get_command(click.Context(memory), "episodes")
    assert episodes_command is not None
    episodes = {p.name: p for p in episodes_command.params}
    assert (episodes["limit"].type.max, episodes["limit"].default) == (
        MAX_EPISODES,
        DEFAULT_EPISODES,
    )
    with pytest.raises(ConfigError, match=f"search.top_k must be at most {MAX_TOP_K}"):
        settings_from_dict({"search": {"top_k": MAX_TOP_K + 1}})


async def test_episodes_refuses_query_parameters_it_does_not_know(api: Api, node: Node):
    await node.add_episode("s1", "one", [])
    answer = await api.get("/api/memory/episodes?limit=1&page=3")
    assert answer.status == 422 and error_code(answer) == "invalid_request"


# Refusals: JSON errors, proper statuses, and the server keeps serving


SEARCH_REFUSALS = [
    (b"{", 400, "bad_json"),
    (b"", 400, "bad_json"),
    (b"   ", 400, "bad_json"),
    (b"\xff\xfe{}", 400, "bad_json"),
    (b'{"query": "x", "alpha": NaN}', 400, "bad_json"),
    (b'{"query": "x", "query": "y"}', 400, "bad_json"),
    (b"[" * 100_000 + b"]" * 100_000, 400, "bad_json"),
    (b"[]", 422, "invalid_request"),
    (b'"doctor"', 422, "invalid_request"),
    (b"{}", 422, "invalid_request"),
    (b'{"query": 5}', 422, "invalid_request"),
    (b'{"query": "   "}', 422, "invalid_request"),
    (b'{"query": "\\ud800"}', 422, "invalid_request"),
    (b'{"query": "x", "top_k": 0}', 422, "invalid_request"),
    (b'{"query": "x", "top_k": 1001}', 422, "invalid_request"),
    (b'{"query": "x", "top_k": "3"}', 422, "invalid_request"),
    (b'{"query": "x", "top_k": true}', 422, "invalid_request"),
    (b'{"query": "x", "top_k": 2.5}', 422, "invalid_request"),
    (b'{"query": "x", "strategy": "grep"}', 422, "invalid_request"),
    (b'{"query": "x", "strategy": ["fts"]}', 422, "invalid_request"),
    (b'{"query": "x", "alpha": 1.5}', 422, "invalid_request"),
    (b'{"query": "x", "alpha": -0.1}', 422, "invalid_request"),
    (b'{"query": "x", "alpha": "0.5"}', 422, "invalid_request"),
    (b'{"query": "x", "mmr": "yes"}', 422, "invalid_request"),
    (b'{"query": "x", "mmr_lambda": 2}', 422, "invalid_request"),
    (b'{"query": "x", "top_K": 3}', 422, "invalid_request"),
]


async def test_malformed_search_bodies_are_refused_and_the_server_stays_up(api: Api):
    for raw, status, code in SEARCH_REFUSALS:
        answer = await api.post("/api/memory/search", raw=raw)
        assert (answer.status, error_code(answer)) == (status, code), raw[:60]
    await assert_still_serving(api)


REMEMBER_REFUSALS: list[tuple[object, int, str]] = [
    ({}, 422, "invalid_request"),
    ({"fact": ""}, 422, "invalid_request"),
    ({"fact": 7}, 422, "invalid_request"),
    ({"fact": "x", "subject": "a"}, 422, "invalid_request"),
    ({"subject": "a", "predicate": "b"}, 422, "invalid_request"),
    ({"subject": "a", "predicate": "b", "object": None}, 422, "invalid_request"),
    ({"fact": "x", "confidence": 1}, 422, "invalid_request"),
    ({"fact": "a\u0000b"}, 422, "invalid_value"),
    ({"fact": "x" * 70_000}, 422, "invalid_value"),
]


async def test_a_refused_field_is_named_with_the_value_it_got(api: Api):
    cases = [
        (b"[]", "the body must be a JSON object, got []"),
        (
            b'{"query": "x", "top_K": 3}',
            "top_K is not a known key; the body takes query, top_k, strategy, alpha, mmr, "
            "mmr_lambda",
        ),
        (b'{"query": "x", "top_k": 1001}', "top_k must be at most 1000, got 1001"),
        (
            b'{"query": "x", "strategy": "grep"}',
            'strategy must be one of "fts", "vector", "hybrid"',
        ),
        (
            b'{"query": "\\ud800"}',
            'query must be Unicode text (it holds a lone surrogate), got "\\ud800"',
        ),
        (b"{}", "query is required"),
    ]
    for raw, expected in cases:
        answer = await api.post("/api/memory/search", raw=raw)
        assert answer.status == 422
        assert answer.body["error"]["message"].startswith(expected), answer.body
    limit = await api.get("/api/memory/episodes?limit=0")
    assert limit.body["error"]["message"] == 'limit must be a positive integer, got "0"'


async def test_malformed_remember_bodies_are_refused_and_nothing_is_stored(api: Api, node: Node):
    before = await node.state_digest()
    for body, status, code in REMEMBER_REFUSALS:
        answer = await api.post("/api/memory/remember", body)
        assert (answer.status, error_code(answer)) == (status, code), str(body)[:60]
    assert await node.state_digest() == before
    await assert_still_serving(api)


async def test_bad_episode_limits_are_refused(api: Api):
    for limit in ("0", "-1", "x", "100001", "1.5", ""):
        answer = await api.get(f"/api/memory/episodes?limit={limit}")
        assert (answer.status, error_code(answer)) == (422, "invalid_request"), limit


async def test_vector_search_or_mmr_with_no_model_is_a_conflict(mesh: Mesh):
    turn_off_embeddings(mesh.home("a"))
    node = await mesh.open("a")
    assert node.embedder is None
    async with api_for(node) as api:
        for body in ({"query": "x", "strategy": "vector"}, {"query": "x", "mmr": True}):
            answer = await api.post("/api/memory/search", body)
            assert (answer.status, error_code(answer)) == (409, "not_available")
        hybrid = await api.post("/api/memory/search", {"query": "x", "strategy": "hybrid"})
        assert hybrid.status == 200
        assert hybrid.body["strategy"] == "fts"
        assert hybrid.body["notes"] == ["hybrid fell back to fts: no embedding model is configured"]


async def test_mmr_through_the_api_answers_mmr_scores(mesh: Mesh):
    node = await mesh.open("a", embedder=load_embedder(DEFAULT_EMBEDDER))  # the shipped model
    for n in range(6):
        await node.remember(("pet", "is named", f"dog number {n}"))
    body = {"query": "dog", "top_k": 3, "mmr": True, "mmr_lambda": 0.5}
    async with api_for(node) as api:
        answer = await api.post("/api/memory/search", body)
    assert answer.status == 200
    assert (answer.body["mmr"], answer.body["total"], answer.body["notes"]) == (True, 3, [])
    assert all("mmr_score" in hit for hit in answer.body["results"])


async def test_a_body_over_the_cap_is_413_and_the_server_stays_up(api: Api):
    answer = await api.post("/api/memory/search", raw=b" " * (MAX_BODY_BYTES + 1))
    assert (answer.status, error_code(answer)) == (413, "too_large")
    at_cap = b'{"query": "doctor"}'.ljust(MAX_BODY_BYTES, b" ")
    assert (await api.post("/api/memory/search", raw=at_cap)).status == 200
    await assert_still_serving(api)


async def test_a_huge_declared_length_is_refused_before_the_body_is_read(api: Api):
    host, port = api.base.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(
            f"POST /api/memory/search HTTP/1.1\r\nHost: {host}:{port}\r\n"
            f"Content-Length: {100 * MAX_BODY_BYTES}\r\n\r\n".encode()
        )
        await writer.drain()
        status_line = await asyncio.wait_for(reader.readline(), WAIT_S)
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()
    assert status_line.split()[1] == b"413"
    await assert_still_serving(api)


async def test_unknown_paths_and_wrong_methods_answer_json_errors(api: Api):
    missing = await api.get("/api/memory/nope")
    assert (missing.status, error_code(missing)) == (404, "not_found")
    wrong = await api.get("/api/memory/search")
    assert (wrong.status, error_code(wrong)) == (405, "method_not_allowed")
    assert wrong.headers["allow"] == "POST"


async def test_a_home_file_that_cannot_be_used_is_a_500_naming_it(api: Api, node: Node):
    (node.home / MARK_FILE).unlink(missing_ok=True)
    (node.home / MARK_FILE).mkdir()  # the clock mark can be neither read nor written, even by root
    answer = await api.post("/api/memory/remember", {"fact": "the mark is stuck"})
    assert (answer.status, error_code(answer)) == (500, "home_file")
    # every write resumes from the mark (a clock reset by another process lowers it), so the
    # read is what fails first
    assert "cannot read the clock mark" in answer.body["error"]["message"]
    assert str(node.home / MARK_FILE) in answer.body["error"]["message"]
    (node.home / MARK_FILE).rmdir()
    await assert_still_serving(api)


async def test_an_unexpected_error_is_a_generic_500_logged_and_the_server_stays_up(
    api: Api, node: Node, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    async def broken() -> dict[str, Any]:
        raise RuntimeError("secret detail")

    monkeypatch.setattr(node, "stats", broken)
    with caplog.at_level(logging.ERROR, logger="feral.api"):
        answer = await api.get("/api/memory/stats")
    assert (answer.status, error_code(answer)) == (500, "internal")
    assert "secret" not in json.dumps(answer.body)
    assert any("GET /api/memory/stats" in r.getMessage() for r in caplog.records)
    await assert_still_serving(api)


# Who may call


async def test_browsers_and_foreign_hosts_are_refused(api: Api):
    refusals = [
        ({"Origin": "http://evil.example"}, "browser_refused"),
        ({"Origin": "null"}, "browser_refused"),
        ({"Origin": api.base}, "browser_refused"),
        ({"Sec-Fetch-Site": "cross-site"}, "browser_refused"),
        ({"Host": "evil.example"}, "host_refused"),  # DNS rebinding: a page of evil.example
        ({"Host": "evil.example:9090"}, "host_refused"),
    ]
    for headers, code in refusals:
        for path in ("/api/memory/stats", "/openapi.json"):
            answer = await api.get(path, headers=headers)
            assert (answer.status, error_code(answer)) == (403, code), headers
    for host in ("localhost:9090", "127.0.0.1", "[::1]:9090"):
        assert (await api.get("/api/memory/stats", headers={"Host": host})).status == 200


async def test_with_a_token_required_every_api_call_needs_it(node: Node):
    async with api_for(node, require_token=True, api_token=TOKEN) as api:
        for path in ("/api/memory/stats", "/api/sync/status", "/openapi.json", "/nope"):
            missing = await api.get(path)
            assert (missing.status, error_code(missing)) == (401, "unauthorized"), path
            assert missing.headers["www-authenticate"].startswith("Bearer")
        for wrong in ("Bearer nope", f"Bearer {TOKEN}x", f"Basic {TOKEN}", TOKEN, "Bearer "):
            answer = await api.get("/api/memory/stats", headers={"Authorization": wrong})
            assert (answer.status, error_code(answer)) == (401, "unauthorized"), wrong
        good = {"Authorization": f"Bearer {TOKEN}"}
        assert (await api.get("/api/memory/stats", headers=good)).status == 200
        search = await api.post("/api/memory/search", {"query": "x"}, headers=good)
        assert search.status == 200
        # a token opens no door for a browser
        browser = {**good, "Origin": "http://evil.example"}
        assert (await api.get("/api/memory/stats", headers=browser)).status == 403
        # any Host is fine off loopback (the token is the check there)
        elsewhere = {**good, "Host": "laptop.lan:9090"}
        assert (await api.get("/api/memory/stats", headers=elsewhere)).status == 200


async def test_sync_keeps_its_own_authentication_and_needs_no_api_token(node: Node):
    async with api_for(node, require_token=True, api_token=TOKEN) as api:
        url = api.base.replace("http://", "ws://") + "/sync"
        async with connect(url, proxy=None, compression=None, open_timeout=WAIT_S) as link:
            assert link.response is not None and link.response.status_code == 101


async def test_serving_off_loopback_makes_a_private_token_file_once(node: Node):
    assert SyncService(node, "127.0.0.1", 9).api_token is None
    assert SyncService(node, "localhost", 9).api_token is None
    first = SyncService(node, "0.0.0.0", 9)  # built, never started: nothing binds
    assert first.api_token is not None and first.api_token_created
    path = node.home / API_TOKEN_FILE
    assert path.read_text().strip() == first.api_token
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    second = SyncService(node, "192.0.2.1", 9)
    assert (second.api_token, second.api_token_created) == (first.api_token, False)
    assert SyncService(node, "127.0.0.1", 9, require_token=True).api_token == first.api_token


def test_an_unusable_token_file_is_a_config_error_naming_it(tmp_path: Path):
    path = tmp_path / API_TOKEN_FILE
    path.write_text("short\n")
    path.chmod(0o600)
    with pytest.raises(HomeFileError, match=f"{path}: the API token must be"):
        load_or_create_api_token(tmp_path)
    path.write_text("has spaces in it but is long enough\n")
    with pytest.raises(HomeFileError, match="without spaces"):
        load_or_create_api_token(tmp_path)
    path.write_text(TOKEN + "\n")
    assert load_or_create_api_token(tmp_path) == (TOKEN, False)
    path.chmod(0o644)
    with pytest.raises(HomeFileError, match="readable by other users"):
        load_or_create_api_token(tmp_path)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("LOCALHOST", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.20", False),
        ("laptop.lan", False),
        ("", False),
    ],
)
def test_is_loopback_host(host: str, loopback: bool):
    assert is_loopback_host(host) is loopback
