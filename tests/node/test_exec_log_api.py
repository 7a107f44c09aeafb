"""``POST /api/exec-log`` (node/api/exec_log_routes.py): the stored entry, JSON errors, OpenAPI."""

from __future__ import annotations

import json

import pytest

from feral.node.assistant.exec_log import list_tool_calls
from feral.node.node import Node

from .test_api import Api, error_code


async def test_a_tool_call_posted_is_stored_and_answered_as_the_row(api: Api, node: Node):
    body = {"tool": "search", "session": "s1", "args": {"q": "tea"}, "result": [1, 2],
            "latency_ms": 7, "success": False}  # fmt: skip
    answer = await api.post("/api/exec-log", body)
    assert answer.status == 200, answer.body
    (stored,) = await list_tool_calls(node)
    assert answer.body == stored
    assert (stored["tool"], stored["session_id"], stored["latency_ms"]) == ("search", "s1", 7)
    assert (json.loads(stored["args"]), json.loads(stored["result"])) == ({"q": "tea"}, [1, 2])
    assert stored["success"] is False
    minimal = await api.post("/api/exec-log", {"tool": "ping"})
    assert minimal.status == 200
    assert (minimal.body["session_id"], minimal.body["success"]) == ("default", True)
    stats = await api.get("/api/memory/stats")
    assert stats.body["tiers"]["execution"]["live"] == 2


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"session": "s1"}, 422, "invalid_request"),
        ({"tool": "  "}, 422, "invalid_request"),
        ({"tool": "x", "latency_ms": -1}, 422, "invalid_request"),
        ({"tool": "x", "colour": "red"}, 422, "invalid_request"),
        ({"tool": "x", "args": {"key": "sk_live_" + "a1B2c3D4e5F6g7H8i9J0k1L2"}}, 422, None),
    ],
)
async def test_bad_bodies_are_json_errors_and_store_nothing(
    api: Api, node: Node, body: dict[str, object], status: int, code: str | None
):
    answer = await api.post("/api/exec-log", body)
    assert answer.status == status, answer.body
    got = error_code(answer)
    if code is not None:
        assert got == code
    else:
        assert got == "secret_refused"
    not_json = await api.post("/api/exec-log", raw=b"{tool")
    assert not_json.status == 400 and error_code(not_json) == "bad_json"
    assert await list_tool_calls(node) == []


async def test_the_route_is_in_the_openapi_document(api: Api):
    document = (await api.get("/openapi.json")).body
    post = document["paths"]["/api/exec-log"]["post"]
    assert post["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ToolCall"
    }
    assert set(document["components"]["schemas"]["ToolCall"]["properties"]) == {
        "tool", "session", "args", "result", "latency_ms", "success",
    }  # fmt: skip
