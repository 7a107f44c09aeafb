"""The API's conflict routes (node/api/conflict_routes.py) on a served node: a race with a
peer's write, listed, resolved, and the errors of the API's style."""

from __future__ import annotations

from feral.node.curation.conflicts import record_conflicts
from feral.node.node import Node
from feral.storage.log.delta_log import apply_page
from feral.sync.delta import Delta, Page
from feral.sync.types import NodeId, RowId

from .test_api import Api, error_code

PEER = NodeId("p" * 32)


async def race_with_a_peer(api: Api, node: Node) -> str:
    """Boost a fact here, and apply a peer's boost of it that raced (no meta row before)."""
    fact = await api.post("/api/memory/remember", {"fact": "the bike lock code is on file"})
    fact_id = str(fact.body["id"])
    mine = await api.post("/api/memory/boost", {"id": fact_id, "importance": 2})
    assert mine.status == 200, mine.body
    theirs = (RowId(fact_id), "note", "user", 4.0, "from the phone", 1)
    page = Page(PEER, 0, (Delta("memory_meta", RowId(fact_id), 1 << 20, PEER, theirs),))
    await node.store.write(apply_page, page, now_ms=node.now_ms(), max_skew_ms=300_000)
    assert await record_conflicts(node) == 1
    return fact_id


async def test_a_race_is_listed_and_resolved_through_the_api(api: Api, node: Node):
    fact_id = await race_with_a_peer(api, node)
    listed = await api.get("/api/memory/conflicts")
    assert listed.status == 200, listed.body
    (record,) = listed.body
    assert record["row_id"] == fact_id
    assert sorted(v["importance"] for v in record["values"]) == [2.0, 4.0]
    peer_side = next(v for v in record["versions"] if v.endswith(PEER))
    done = await api.post(f"/api/memory/conflicts/{record['id']}/resolve", {"keep": peer_side})
    assert done.status == 200, done.body
    assert done.body["resolved"] is True and done.body["kept"] == peer_side
    assert (await api.get("/api/memory/conflicts")).body == []
    assert len((await api.get("/api/memory/conflicts?all=true")).body) == 1
    status = await api.get("/api/sync/status")
    assert status.body["conflicts"] == 0


async def test_bad_ids_versions_and_bodies_are_json_errors(api: Api, node: Node):
    await race_with_a_peer(api, node)
    (record,) = (await api.get("/api/memory/conflicts")).body
    path = f"/api/memory/conflicts/{record['id']}/resolve"
    unknown = await api.post("/api/memory/conflicts/cnope/resolve", {"keep": "1:x"})
    assert (unknown.status, error_code(unknown)) == (404, "not_found")
    wrong = await api.post(path, {"keep": "12:zz"})
    assert (wrong.status, error_code(wrong)) == (404, "not_found")
    missing = await api.post(path, {})
    assert missing.status == 422
    bad_query = await api.get("/api/memory/conflicts?all=maybe")
    assert bad_query.status == 422
