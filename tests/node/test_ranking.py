"""Search ranked by time and importance: ``final = relevance × temporal × importance``."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from feral.node.curation import actions as curation
from feral.node.node import Node
from feral.node.recall.search import SearchRequest
from feral.node.settings.config import load_settings, save_settings
from feral.node.settings.limits import MAX_IMPORTANCE
from feral.node.settings.validation import Invalid, convert
from feral.storage.memory.memory_model import Meta, write_meta
from feral.storage.search.ranking import DAY_MS, IMPORTANCE_CAP, temporal_factor
from feral.sync.errors import InvalidInput, NotFoundError

from .support import ManualClock, Mesh

START_MS = 1_790_000_000_000
# Look-alikes: the stale one holds one more of the query's words, so by relevance alone it wins.
STALE = ("user", "dentist", "Dr. Wu at the Harbour clinic on Quay Street")
FRESH = ("user", "dentist", "Dr. Wu at the Harbour practice")
QUERY = "dentist Wu Harbour clinic"


@pytest.fixture
async def mesh(tmp_path: Path) -> AsyncIterator[Mesh]:
    mesh = Mesh(tmp_path)
    mesh.add("a")
    yield mesh
    await mesh.aclose()


def set_decay(home: Path, decay: float) -> None:
    settings = load_settings(home)
    search = dataclasses.replace(settings.search, decay_per_day=decay)
    save_settings(home, dataclasses.replace(settings, search=search))


async def aged_pair(mesh: Mesh, days: int = 450) -> tuple[Node, ManualClock, str, str]:
    """A node (full-text search only) holding the stale look-alike, written ``days`` ago, and
    the fresh one, written now."""
    clock = ManualClock(START_MS)
    node = await mesh.open("a", now_ms=clock)
    stale = (await node.remember(STALE))["id"]
    clock.advance(days * DAY_MS)
    fresh = (await node.remember(FRESH))["id"]
    return node, clock, stale, fresh


async def ranked(node: Node, **options: object) -> list[str]:
    result = await node.search(QUERY, **options)  # type: ignore[arg-type]
    return [hit["id"] for hit in result.results]


def test_temporal_decays_linearly_to_zero_and_spares_identity_facts():
    day = DAY_MS
    assert temporal_factor(Meta("m", updated_at=0), 365 * day, 0.001) == pytest.approx(0.635)
    assert temporal_factor(Meta("m", updated_at=0), 2000 * day, 0.001) == 0.0
    assert temporal_factor(Meta("m", category="identity"), 2000 * day, 0.001) == 1.0
    assert temporal_factor(Meta("m", updated_at=5 * day), day, 0.001) == 1.0  # from the future
    assert temporal_factor(Meta("m", updated_at=0), 2000 * day, 0.0) == 1.0


async def test_without_decay_the_better_match_wins_even_when_stale(mesh: Mesh):
    set_decay(mesh.home("a"), 0.0)
    node, _, stale, fresh = await aged_pair(mesh)
    assert await ranked(node) == [stale, fresh]


async def test_decay_puts_the_fresh_look_alike_first(mesh: Mesh):
    node, _, stale, fresh = await aged_pair(mesh)
    before = await node.export_lines()
    result = await node.search(QUERY)
    assert await node.export_lines() == before  # a ranking is derived: searching writes nothing
    assert [h["id"] for h in result.results] == [fresh, stale]
    old = result.results[1]
    assert old["temporal"] == pytest.approx(1 - 0.001 * 450)
    assert old["score"] == pytest.approx(old["relevance"] * old["temporal"])


async def test_an_identity_fact_does_not_decay(mesh: Mesh):
    node, clock, stale, fresh = await aged_pair(mesh)
    await node.commit(write_meta, Meta(stale, category="identity", updated_at=START_MS))
    assert await ranked(node) == [stale, fresh]


async def test_a_boost_lifts_the_stale_memory_back_and_a_cut_drops_it(mesh: Mesh):
    node, _, stale, fresh = await aged_pair(mesh)
    meta = await curation.boost(node, stale, 3.0, "the one I go to")
    assert (meta["importance"], meta["importance_note"]) == (3.0, "the one I go to")
    assert await ranked(node) == [stale, fresh]
    await curation.boost(node, stale, 0.5, "moved away")
    assert await ranked(node) == [fresh, stale]
    scores = (await node.search(QUERY)).results
    cut = (scores[0]["score"] + scores[1]["score"]) / 2
    assert await ranked(node, min_score=cut) == [fresh]


async def test_a_boost_keeps_the_updated_time_and_the_scope(mesh: Mesh):
    node, _, stale, _ = await aged_pair(mesh)
    await node.remember(STALE, scope="agent:planner")
    meta = await curation.boost(node, stale, 2.0)
    assert (meta["scope"], meta["updated_at"]) == ("agent:planner", START_MS)


@pytest.mark.parametrize("importance", [0.0, -1.0, 10.5, float("nan")])
async def test_an_importance_out_of_range_is_refused_and_nothing_written(mesh: Mesh, importance):
    node, _, stale, _ = await aged_pair(mesh)
    before = await node.export_lines()
    with pytest.raises(InvalidInput, match="importance must be above 0 and at most 10"):
        await curation.boost(node, stale, importance)
    assert await node.export_lines() == before


async def test_an_importance_a_peer_wrote_out_of_range_is_capped_in_ranking(mesh: Mesh):
    assert IMPORTANCE_CAP == MAX_IMPORTANCE
    node, _, stale, fresh = await aged_pair(mesh)
    await node.commit(write_meta, Meta(stale, importance=1e9, updated_at=START_MS))
    await node.commit(write_meta, Meta(fresh, importance=-5.0, updated_at=START_MS))
    hits = (await node.search(QUERY)).results
    assert [(h["id"], h["importance"]) for h in hits] == [(stale, 10.0), (fresh, 0.0)]


async def test_boosting_an_unknown_memory_is_not_found(mesh: Mesh):
    node = await mesh.open("a")
    with pytest.raises(NotFoundError):
        await curation.boost(node, "no-such-id", 2.0)


async def test_min_score_defaults_to_the_setting(mesh: Mesh):
    home = mesh.home("a")
    settings = load_settings(home)
    search = dataclasses.replace(settings.search, min_score=0.3)
    save_settings(home, dataclasses.replace(settings, search=search))
    node, _, stale, fresh = await aged_pair(mesh, days=900)  # the stale one at 10%
    result = await node.search(QUERY)
    assert [h["id"] for h in result.results] == [fresh]
    assert result.results[0]["score"] >= 0.3
    assert await ranked(node, min_score=0.0) == [fresh, stale]


async def test_search_keeps_only_the_asked_scope(mesh: Mesh):
    node, _, stale, fresh = await aged_pair(mesh)
    await node.remember(FRESH, scope="session:trip-2026")
    assert await ranked(node, scope="session:trip-2026") == [fresh]
    assert await ranked(node, scope="user") == [stale]
    assert await ranked(node, scope="agent:nobody") == []
    assert set(await ranked(node)) == {stale, fresh}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"query": "x", "min_score": -0.1}, "min_score"),
        ({"query": "x", "min_score": 11}, "min_score"),
        ({"query": "x", "scope": "session:"}, "scope"),
        ({"query": "x", "scope": "team:a"}, "scope"),
    ],
)
def test_a_search_request_checks_min_score_and_scope(body, field):
    with pytest.raises(Invalid, match=field):
        convert(body, SearchRequest)
