"""The API's curation routes (node/api/curation.py) on a served node: shapes, errors, writes."""

from __future__ import annotations

import pytest

from feral.node.curation import actions as curation
from feral.node.node import Node

from .test_api import Api, error_code


async def remember(api: Api, **body: str) -> str:
    answer = await api.post("/api/memory/remember", body)
    assert answer.status == 200, answer.body
    return str(answer.body["id"])


async def test_remember_search_and_list_take_a_scope(api: Api, node: Node):
    mine = await remember(api, fact="the spare key is under the pot")
    theirs = await remember(api, fact="the spare key is in the car", scope="agent:helper")
    found = await api.post("/api/memory/search", {"query": "spare key", "scope": "agent:helper"})
    assert [h["id"] for h in found.body["results"]] == [theirs]
    assert found.body["results"][0]["scope"] == "agent:helper"
    listed = await api.get("/api/memory/list?scope=user")
    assert [r["id"] for r in listed.body] == [mine]
    assert listed.body == await curation.list_memories(
        node, tier=None, scope="user", status="active", limit=50
    )
    none = await api.post("/api/memory/search", {"query": "spare key", "min_score": 10})
    assert none.body["results"] == []


async def test_archive_restore_and_list_by_status(api: Api):
    fact = await remember(api, fact="the wifi password changes monthly")
    archived = await api.post("/api/memory/archive", {"id": fact})
    assert (archived.status, archived.body["archived"]) == (200, True)
    listed = await api.get("/api/memory/list?status=archived")
    assert [(r["id"], r["status"]) for r in listed.body] == [(fact, "archived")]
    restored = await api.post("/api/memory/restore", {"id": fact})
    assert restored.body["archived"] is False
    assert (await api.get("/api/memory/list?status=archived")).body == []


async def test_boost_answers_the_meta_row_and_refuses_bad_values(api: Api):
    fact = await remember(api, fact="the boiler service is due in March")
    answer = await api.post("/api/memory/boost", {"id": fact, "importance": 2, "reason": "cold"})
    assert answer.status == 200, answer.body
    assert (answer.body["importance"], answer.body["importance_note"]) == (2.0, "cold")
    for importance in (0, -1, 10.5, "high"):
        bad = await api.post("/api/memory/boost", {"id": fact, "importance": importance})
        assert bad.status == 422 and error_code(bad) == "invalid_request", bad.body
        assert "importance" in bad.body["error"]["message"]
    missing = await api.post("/api/memory/boost", {"id": "nope", "importance": 2})
    assert missing.status == 404 and error_code(missing) == "not_found"


@pytest.mark.parametrize(
    "query", ["scope=session:", "status=gone", "tier=execution", "limit=0", "scope=team:x"]
)
async def test_bad_list_parameters_are_422(api: Api, query: str):
    answer = await api.get(f"/api/memory/list?{query}")
    assert answer.status == 422, answer.body
    assert error_code(answer) == "invalid_request"


async def test_gc_and_distill_plan_then_apply(api: Api, node: Node):
    ids = [
        await remember(api, subject="user", predicate="likes", object=thing, scope="session:s9")
        for thing in ("figs", "dates", "plums")
    ]
    before = await node.export_lines()
    plan = await api.post("/api/memory/gc", {"compact_above": 2, "dry_run": True})
    assert plan.status == 200 and plan.body["dry_run"] is True
    assert [m["id"] for m in plan.body["groups"][0]["members"]] == ids
    assert (await api.post("/api/memory/distill", {"session": "s9", "dry_run": True})).status == 200
    assert await node.export_lines() == before
    done = await api.post("/api/memory/gc", {"compact_above": 2})
    merged = done.body["groups"][0]["consolidated_id"]
    assert (await api.get("/api/memory/list")).body[0]["content"] == "user likes figs; dates; plums"
    promoted = await api.post("/api/memory/distill", {"session": "s9"})
    assert [r["id"] for r in promoted.body["promoted"]] == [merged]
    assert (await api.get("/api/memory/list?scope=session:s9")).body == []
    for body in ({"session": "has space"}, {"session": "s", "extra": 1}, {}):
        bad = await api.post("/api/memory/distill", body)
        assert bad.status == 422, (body, bad.body)
    assert (await api.post("/api/memory/gc", {"ttl_days": -1})).status == 422
