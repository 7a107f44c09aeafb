"""The HTTP API refuses query parameters it would ignore (issue 15, item 6).

``POST /api/memory/search?top_k=1`` used to answer ten results as if ``top_k`` had been heard;
now every endpoint that reads no query string answers a 422 JSON error naming the parameter,
before anything is written, and the endpoints that read one still refuse unknown keys.
"""

from __future__ import annotations

import pytest

from feral.node.node import Node

from .test_api import Api, error_code


async def test_a_query_parameter_on_search_is_refused(api: Api, node: Node) -> None:
    await node.absorb("I live in Porto")
    answer = await api.post("/api/memory/search?top_k=1", {"query": "Porto"})
    assert answer.status == 422
    assert error_code(answer) == "invalid_request"
    assert "top_k" in answer.body["error"]["message"]


async def test_a_refused_remember_writes_nothing(api: Api, node: Node) -> None:
    answer = await api.post("/api/memory/remember?scope=agent:x", {"fact": "I live in Porto"})
    assert answer.status == 422
    found = await api.post("/api/memory/search", {"query": "Porto", "strategy": "fts"})
    assert found.status == 200 and found.body["total"] == 0


@pytest.mark.parametrize(
    "path",
    [
        "/api/memory/stats?verbose=1",
        "/api/sync/status?peer=x",
        "/api/memory/wiki?limit=3",
        "/api/memory/episodes?limit=2&sort=old",
        "/api/memory/list?colour=red",
        "/api/graph/entities?kind=person",
    ],
)
async def test_every_get_refuses_a_parameter_it_does_not_know(api: Api, path: str) -> None:
    answer = await api.call("GET", path)
    assert answer.status == 422, (path, answer.body)
    assert error_code(answer) == "invalid_request"


@pytest.mark.parametrize(
    "path", ["/api/memory/episodes?limit=2", "/api/memory/list?tier=semantic", "/api/memory/stats"]
)
async def test_the_parameters_an_endpoint_reads_still_work(api: Api, path: str) -> None:
    assert (await api.call("GET", path)).status == 200
