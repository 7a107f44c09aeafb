"""Access strength (storage/memory/access_strength.py, node/recall/access.py): what a search
retrieved lifts its ranking a little, on this device only, and never replicates, never archives,
never lowers."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from feral.storage.db.connection import Connection
from feral.storage.log.delta_log import changes_since
from feral.storage.memory.access_strength import (
    ACCESS_WEIGHT,
    MAX_STRENGTH,
    MIN_SPACING_MS,
    Access,
    access_factor,
    bumped,
    read_access,
)
from feral.storage.search.ranking import DAY_MS
from feral.sync.schema import TABLES

from .support import ManualClock, Mesh, RecordingLink, apply_page

START_MS = time.time_ns() // 1_000_000
# Two look-alikes the query matches equally well: by relevance alone they tie (broken by id).
TWINS = (("user", "uses", "the Harbour gym"), ("user", "uses", "the Harbour pool"))
QUERY = "Harbour"


@pytest.fixture
async def mesh(tmp_path: Path) -> AsyncIterator[Mesh]:
    mesh = Mesh(tmp_path)
    mesh.add("a", "b")
    yield mesh
    await mesh.aclose()


def log_and_access(conn: Connection) -> tuple[int, list[tuple[str, int]]]:
    (entries,) = conn.execute("SELECT count(*) FROM delta_log").fetchone()
    rows = conn.execute("SELECT memory_id, accesses FROM access_strength ORDER BY 1").fetchall()
    return int(entries), [(str(m), int(n)) for m, n in rows]


def test_a_retrieval_adds_what_had_faded_so_spaced_ones_count_more():
    first = bumped(Access(), START_MS)
    assert (first.strength, first.accesses) == (0.0, 1)  # it starts the clock
    assert access_factor(first, START_MS) == 1.0
    massed = bumped(first, START_MS + MIN_SPACING_MS - 1)  # a burst is one retrieval
    assert massed == first
    day = bumped(first, START_MS + DAY_MS)
    month = bumped(first, START_MS + 30 * DAY_MS)  # most of it had faded: rehearsal counts
    assert 0 < day.strength < 0.2 < 0.5 < month.strength
    assert day.accesses == month.accesses == 2
    many = first
    for month in range(1, 60):
        many = bumped(many, START_MS + month * 30 * DAY_MS)
    assert many.strength == MAX_STRENGTH


def test_the_factor_lifts_by_at_most_the_weight_never_lowers_and_fades_back_to_one():
    assert access_factor(Access(), START_MS) == 1.0
    strong = Access(MAX_STRENGTH, START_MS, 40)
    assert access_factor(strong, START_MS) == pytest.approx(1 + ACCESS_WEIGHT)
    faded = [access_factor(strong, START_MS + d * DAY_MS) for d in (1, 30, 365, 5000)]
    assert faded == sorted(faded, reverse=True)
    assert all(1.0 <= f <= 1 + ACCESS_WEIGHT for f in faded)
    assert faded[-1] == pytest.approx(1.0, abs=0.01)


async def test_ranking_uses_what_this_device_retrieved(mesh: Mesh):
    clock = ManualClock(START_MS)
    node = await mesh.open("a", now_ms=clock)
    ids = [(await node.remember(triple))["id"] for triple in TWINS]
    ranked = [hit["id"] for hit in (await node.search(QUERY)).results]
    first, second = ranked
    assert set(ranked) == set(ids)
    twin = {first: TWINS[ids.index(first)], second: TWINS[ids.index(second)]}
    for _ in range(1, 4):  # the one ranked second is looked for, on days apart
        clock.advance(DAY_MS)
        found = (await node.search(twin[second][2].split()[-1])).results
        assert [hit["id"] for hit in found] == [second]
    clock.advance(DAY_MS)
    result = (await node.search(QUERY)).results
    assert [hit["id"] for hit in result] == [second, first]
    top, other = result
    assert top["access"] > other["access"] >= 1.0
    assert top["relevance"] == pytest.approx(other["relevance"])
    assert top["score"] == pytest.approx(
        top["relevance"] * top["temporal"] * top["importance"] * top["access"]
    )


async def test_retrievals_never_enter_the_delta_log_the_export_or_the_links(mesh: Mesh):
    node = await mesh.open("a")
    ids = [(await node.remember(triple))["id"] for triple in TWINS]
    link = RecordingLink()
    node.links[mesh.ids["b"]] = link  # type: ignore[index]
    before = await node.export_lines(), await node.version_vector(), await node.state_digest()
    entries, _ = await node.store.read(log_and_access)
    results = [(await node.search(QUERY)).as_dict()["results"] for _ in range(3)]
    assert results[0] == results[1] == results[2]  # a burst of searches ranks alike
    after = await node.export_lines(), await node.version_vector(), await node.state_digest()
    assert after == before
    assert await node.store.read(log_and_access) == (entries, sorted((i, 1) for i in ids))
    assert link.calls == 0
    assert "access_strength" not in {table.name for table in TABLES}  # no delta can name it


async def test_the_other_device_gets_the_memories_but_none_of_the_reads(mesh: Mesh):
    a, b = await mesh.open("a"), await mesh.open("b")
    for triple in TWINS:
        await a.remember(triple)
    await a.search(QUERY)
    while pages := await a.store.read(changes_since, await b.version_vector(), 1000):
        for page in pages:
            await apply_page(b, page)
    assert await b.export_lines() == await a.export_lines()
    assert (await b.store.read(log_and_access))[1] == []
    hits = (await b.search(QUERY)).results
    assert [hit["access"] for hit in hits] == [1.0, 1.0]  # its first look: nothing retrieved yet


async def test_a_memory_never_retrieved_is_neither_archived_nor_lowered(mesh: Mesh):
    clock = ManualClock(START_MS)
    node = await mesh.open("a", now_ms=clock)
    kept, other = [(await node.remember(triple))["id"] for triple in TWINS]
    for _ in range(5):
        clock.advance(30 * DAY_MS)
        await node.search("pool")  # only the other twin is ever retrieved
    clock.advance(400 * DAY_MS)
    row = await node.get(kept)
    assert not row["archived"] and not row["deleted"]
    hits = {hit["id"]: hit for hit in (await node.search(QUERY)).results}
    assert hits[kept]["access"] == 1.0 and hits[other]["access"] >= 1.0


async def test_a_nuke_takes_the_memorys_access_row_with_it(mesh: Mesh):
    node = await mesh.open("a")
    ids = [(await node.remember(triple))["id"] for triple in TWINS]
    await node.search(QUERY)
    await node.nuke(ids[0])
    rows = await node.store.read(read_access, ids)
    assert set(rows) == {ids[1]}
