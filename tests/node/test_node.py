from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from feral.node.node import Node
from feral.storage.log.delta_log import changes_since
from feral.sync.delta import Page
from feral.sync.errors import ClockSkewError, NotAvailable, NotFoundError
from feral.sync.hlc import unpack
from tests.embedders import HashingEmbedder

from .support import (
    MINUTE,
    SECOND,
    ManualClock,
    Mesh,
    RecordingLink,
    apply_page,
    now_ms,
    turn_off_embeddings,
)


@pytest.fixture
async def mesh(tmp_path: Path) -> AsyncIterator[Mesh]:
    mesh = Mesh(tmp_path)
    yield mesh
    await mesh.aclose()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(now_ms())


@pytest.fixture
async def node(mesh: Mesh, clock: ManualClock) -> Node:
    mesh.add("a")
    return await mesh.open("a", now_ms=clock)


@pytest.fixture
async def bare(mesh: Mesh, clock: ManualClock) -> Node:
    """A node whose settings turn embeddings off (``memory.embedder`` is ``"none"``)."""
    mesh.add("a")
    turn_off_embeddings(mesh.home("a"))
    return await mesh.open("a", now_ms=clock)


# Local writes


async def test_remember_stores_a_fact_stamped_by_this_node(node: Node) -> None:
    row = await node.remember(("Alice", "birthday", "May 4"))
    assert (row["subject"], row["predicate"], row["object"]) == ("Alice", "birthday", "May 4")
    assert row["tier"] == "semantic"
    assert row["origin"] == node.node_id
    assert row["hlc"] == node.clock.last
    assert await node.get(row["id"]) == row


async def test_remembering_the_same_fact_twice_keeps_one_row_and_one_stamp(node: Node) -> None:
    first = await node.remember(("Alice", "birthday", "May 4"))
    again = await node.remember(("Alice", "birthday", "May 4"))
    assert again == first
    stats = await node.stats()
    assert stats["tiers"]["semantic"]["live"] == 1
    assert stats["delta_log_entries"] == 1


async def test_forget_archives_and_restore_brings_back_under_newer_stamps(node: Node) -> None:
    row = await node.remember(("user", "doctor", "Dr. Chen"))
    forgotten = await node.set_archived(row["id"], True)
    restored = await node.set_archived(row["id"], False)
    assert forgotten["archived"] is True
    assert restored["archived"] is False
    assert row["hlc"] < forgotten["hlc"] < restored["hlc"]


async def test_forgetting_an_unknown_id_raises_not_found(node: Node) -> None:
    with pytest.raises(NotFoundError):
        await node.set_archived("no-such-id", True)


async def test_nuke_leaves_a_tombstone_and_the_memory_is_gone(node: Node) -> None:
    row = await node.remember(("user", "diary", "hunter2"))  # a password would be refused
    tomb = await node.nuke(row["id"])
    assert tomb["deleted"] is True
    assert "hunter2" not in tomb.values()
    with pytest.raises(NotFoundError):
        await node.get(row["id"])
    exported = [json.loads(line) for line in await node.export_lines()]
    assert [(r["id"], r["deleted"]) for r in exported] == [(row["id"], True)]
    assert "hunter2" not in "".join(await node.export_lines())


async def test_import_facts_writes_in_batches_and_skips_repeats(node: Node) -> None:
    await node.remember(("a", "is", "known"))
    triples = [("a", "is", "known"), ("b", "is", "new"), ("c", "is", "new"), ("b", "is", "new")]
    batches: list[int] = []
    written = await node.import_facts(triples, progress=batches.append, batch=2)
    assert written == 2
    assert batches == [2, 2]
    stats = await node.stats()
    assert stats["tiers"]["semantic"]["live"] == 3


async def test_add_episode_lists_newest_first(node: Node, clock: ManualClock) -> None:
    older = await node.add_episode("s1", "Planned the Lisbon trip", ["Alice", "Lisbon"])
    clock.advance(SECOND)
    newer = await node.add_episode("s1", "Booked the flights")
    assert older["tier"] == "episodic"
    assert json.loads(older["entities"]) == ["Alice", "Lisbon"]
    assert [e["id"] for e in await node.episodes()] == [newer["id"], older["id"]]


async def test_log_execution_appends_an_entry_that_cannot_be_archived(node: Node) -> None:
    row = await node.log_execution(
        "s1", "search", args={"q": "x"}, result={"ok": True}, latency_ms=3, success=True
    )
    assert row["tier"] == "execution"
    assert row["tool"] == "search"
    assert row["success"] is True
    with pytest.raises(NotFoundError):
        await node.set_archived(row["id"], True)


# The clock (TEST-CATALOG 16)


async def test_stamps_keep_increasing_across_reopen_with_the_wall_clock_set_back(
    mesh: Mesh,
) -> None:
    mesh.add("a")
    clock = ManualClock(now_ms())
    node = await mesh.open("a", now_ms=clock)
    for n in range(3):
        last = (await node.remember(("fact", "number", str(n))))["hlc"]
    await node.close()

    clock.advance(-10 * MINUTE)
    reopened = await mesh.open("a", now_ms=clock)
    stamps = [(await reopened.remember(("after", "number", str(n))))["hlc"] for n in range(3)]
    assert last < stamps[0] < stamps[1] < stamps[2]
    assert unpack(stamps[0])[0] >= unpack(last)[0]


async def test_a_second_node_on_the_same_home_stamps_above_the_first(mesh: Mesh) -> None:
    mesh.add("a")
    clock = ManualClock(now_ms())
    first = await mesh.open("a", now_ms=clock)
    behind = await mesh.open("a", now_ms=ManualClock(clock.now - MINUTE))
    one = await first.remember(("x", "is", "1"))
    two = await behind.remember(("x", "is", "2"))
    three = await first.remember(("x", "is", "3"))
    assert one["hlc"] < two["hlc"] < three["hlc"]


# Search


async def test_vector_search_without_an_embedder_is_not_available(bare: Node) -> None:
    await bare.remember(("Alice", "likes", "coffee"))
    with pytest.raises(NotAvailable, match="no embedding model"):
        await bare.search("coffee", strategy="vector")


async def test_hybrid_search_without_an_embedder_falls_back_to_fts_and_says_so(bare: Node) -> None:
    node = bare
    row = await node.remember(("Alice", "likes", "coffee"))
    result = await node.search("coffee", strategy="hybrid")
    assert result.strategy == "fts"
    assert [hit["id"] for hit in result.results] == [row["id"]]
    assert result.total == 1
    stats = await node.stats()
    assert stats["embedder"] is None
    assert stats["vector_search"].startswith("off")


async def test_with_an_embedder_vector_and_hybrid_search_work(mesh: Mesh) -> None:
    mesh.add("a")
    node = await mesh.open("a", embedder=HashingEmbedder(32))
    coffee = await node.remember(("Alice", "likes", "coffee"))
    await node.remember(("Bob", "plays", "chess"))
    await node.embed_queued()
    vector = await node.search("coffee", strategy="vector", top_k=1)
    hybrid = await node.search("coffee", strategy="hybrid", top_k=1)
    assert (vector.strategy, hybrid.strategy) == ("vector", "hybrid")
    assert vector.results[0]["id"] == coffee["id"]
    assert hybrid.results[0]["id"] == coffee["id"]
    stats = await node.stats()
    assert stats["embedder"] == {"name": "hashing-32", "dim": 32}
    assert stats["vector_search"] == "on"
    assert stats["vectors"] == 2
    assert stats["embed_pending"] == 0


# Replication entry points


async def apply_all(receiver: Node, pages: list[Page], sender: Node) -> list[int]:
    return [await apply_page(receiver, page, sender.node_id) for page in pages]


async def pages_for(sender: Node, theirs: dict[str, int]) -> list[Page]:
    """What ``sender`` holds beyond ``theirs``, read as a link reads it."""
    pages: list[Page] = await sender.store.read(changes_since, theirs, 1000)
    return pages


async def test_applying_another_nodes_pages_converges(mesh: Mesh) -> None:
    mesh.add("a", "b")
    node_a = await mesh.open("a")
    node_b = await mesh.open("b")
    await node_a.remember(("shared", "fact", "from a"))
    fact = await node_b.remember(("user", "city", "Lisbon"))
    await node_b.add_episode("s", "Moved to Lisbon")
    await node_b.set_archived(fact["id"], True)

    pages = await pages_for(node_b, await node_a.version_vector())
    assert sum(await apply_all(node_a, pages, node_b)) == 3
    for page in await pages_for(node_a, await node_b.version_vector()):
        await apply_page(node_b, page, node_a.node_id)

    assert await node_a.export_lines() == await node_b.export_lines()
    assert await node_a.state_digest() == await node_b.state_digest()
    assert await node_a.version_vector() == await node_b.version_vector()
    again = await pages_for(node_b, {})
    assert [await apply_page(node_a, page) for page in again] == [0] * len(again)


async def test_a_page_beyond_the_skew_window_is_refused_and_changes_nothing(mesh: Mesh) -> None:
    mesh.add("a", "b")
    real = now_ms()
    node_a = await mesh.open("a", now_ms=ManualClock(real))
    node_b = await mesh.open("b", now_ms=ManualClock(real + 11 * MINUTE))  # past 2 windows
    await node_a.remember(("a", "has", "something"))
    await node_b.remember(("b", "is", "from the future"))
    before = (await node_a.export_lines(), await node_a.version_vector(), node_a.clock.last)

    pages = await pages_for(node_b, {})
    with pytest.raises(ClockSkewError) as refused:
        await apply_page(node_a, pages[0], node_b.node_id)

    assert node_b.node_id[:8] in str(refused.value)  # the origin, by its short id
    assert refused.value.window_ms == node_a.settings.sync.max_clock_skew_ms
    assert (await node_a.export_lines(), await node_a.version_vector(), node_a.clock.last) == before
    later = await node_a.remember(("a", "still", "writes"))
    assert unpack(later["hlc"])[0] < real + MINUTE


# Live links


async def test_notify_changed_tells_every_link_but_the_excluded_one(node: Node) -> None:
    first, second = RecordingLink(), RecordingLink()
    node.links = {node.node_id: first, "b" * 32: second}  # type: ignore[dict-item]
    node.notify_changed(exclude=second)
    await node.remember(("a", "b", "c"))
    row = await node.add_episode("s", "summary")
    await node.set_archived(row["id"], True)
    await node.nuke(row["id"])
    await node.log_execution("s", "t", args={}, result={}, latency_ms=1, success=True)
    await node.import_facts([("x", "y", "z")])
    await node.close()  # waits for the pushes still pending
    assert first.calls == 7
    assert second.calls == 6
