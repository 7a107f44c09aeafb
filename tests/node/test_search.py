"""``Node.search`` with MMR: diversity over near-duplicates, defaults from settings (and the
alpha of a long query), no model."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from feral.node.node import Node
from feral.node.recall.search import SearchRequest, SearchResult
from feral.node.settings.bounds import DEFAULT_ALPHA
from feral.node.settings.config import load_settings, save_settings
from feral.node.settings.limits import MAX_QUERY_CHARS, MAX_TOP_K
from feral.node.settings.validation import Invalid, convert
from feral.storage.encoders.embedders import DEFAULT_EMBEDDER, load_embedder
from feral.storage.search.fusion import LONG_QUERY_ALPHA, SPEAKER_CUE
from feral.sync.errors import NotAvailable
from tests.embedders import HashingEmbedder

from .support import Mesh, turn_off_embeddings

ORIGINAL = ("coffee", "comes from", "ethiopian beans roasted dark")
NEAR_DUPLICATE = ("coffee", "comes from", "ethiopian beans roasted very dark")
DIFFERENT = ("coffee", "is served at", "the corner cafe")
QUERY = "coffee from ethiopian beans"


@pytest.fixture
async def mesh(tmp_path: Path) -> AsyncIterator[Mesh]:
    mesh = Mesh(tmp_path)
    mesh.add("a")
    yield mesh
    await mesh.aclose()


async def coffee_node(mesh: Mesh) -> tuple[Node, list[str]]:
    node = await mesh.open("a", embedder=HashingEmbedder(256))
    rows = [await node.remember(t) for t in (ORIGINAL, NEAR_DUPLICATE, DIFFERENT)]
    await node.remember(("tea", "grows in", "assam"))
    await node.embed_queued()  # writes leave embedding to the background (node/embedding.py)
    return node, [row["id"] for row in rows]


def turn_on_mmr_in_settings(home: Path) -> None:
    settings = load_settings(home)
    save_settings(home, dataclasses.replace(settings, search=dataclasses.replace(
        settings.search, mmr=True, mmr_lambda=0.5
    )))  # fmt: skip


@pytest.mark.parametrize("strategy", ["vector", "hybrid", "fts"])
async def test_mmr_picks_a_diverse_second_result_over_a_near_duplicate(mesh: Mesh, strategy):
    node, (original, duplicate, different) = await coffee_node(mesh)
    plain = await node.search(QUERY, strategy=strategy, top_k=2, mmr=False)
    assert [h["id"] for h in plain.results] == [original, duplicate]
    assert not plain.mmr
    diverse = await node.search(QUERY, strategy=strategy, top_k=2, mmr=True, mmr_lambda=0.5)
    assert [h["id"] for h in diverse.results] == [original, different]
    assert diverse.mmr and diverse.strategy == strategy and diverse.notes == ()
    assert diverse.total == 2
    first, second = diverse.results
    assert first["mmr_score"] == pytest.approx(0.5 * first["score"], abs=1e-6)
    assert second["mmr_score"] < 0.5 * second["score"]  # penalised for its likeness to the first


@pytest.mark.parametrize("strategy", ["vector", "hybrid", "fts"])
async def test_mmr_with_lambda_one_keeps_the_relevance_order(mesh: Mesh, strategy):
    node, _ = await coffee_node(mesh)
    plain = await node.search(QUERY, strategy=strategy, top_k=3, mmr=False)
    reranked = await node.search(QUERY, strategy=strategy, top_k=3, mmr=True, mmr_lambda=1.0)
    assert [h["id"] for h in reranked.results] == [h["id"] for h in plain.results]
    assert [h["mmr_score"] for h in reranked.results] == [h["score"] for h in plain.results]


async def test_mmr_and_its_lambda_default_to_the_settings(mesh: Mesh):
    turn_on_mmr_in_settings(mesh.home("a"))
    node, (original, _, different) = await coffee_node(mesh)
    result = await node.search(QUERY, strategy="vector", top_k=2)
    assert result.mmr
    assert [h["id"] for h in result.results] == [original, different]
    assert not (await node.search(QUERY, strategy="vector", top_k=2, mmr=False)).mmr


async def test_mmr_asked_for_without_an_embedder_is_not_available(mesh: Mesh):
    turn_off_embeddings(mesh.home("a"))
    node = await mesh.open("a")
    assert node.embedder is None
    await node.remember(ORIGINAL)
    with pytest.raises(NotAvailable, match="MMR needs embeddings"):
        await node.search(QUERY, mmr=True)


async def test_mmr_on_in_settings_without_an_embedder_is_skipped_and_says_so(mesh: Mesh):
    turn_on_mmr_in_settings(mesh.home("a"))
    turn_off_embeddings(mesh.home("a"))
    node = await mesh.open("a")
    assert node.embedder is None
    row = await node.remember(ORIGINAL)
    result = await node.search(QUERY, strategy="fts")
    assert not result.mmr
    assert result.notes == ("mmr skipped: no embedding model is configured",)
    assert [h["id"] for h in result.results] == [row["id"]]
    assert result.as_dict()["notes"] == list(result.notes)


async def test_mmr_works_with_the_shipped_model(mesh: Mesh):
    node = await mesh.open("a", embedder=load_embedder(DEFAULT_EMBEDDER))
    for triple in (ORIGINAL, NEAR_DUPLICATE, DIFFERENT):
        await node.remember(triple)
    await node.embed_queued()  # embedding is off the write path
    result = await node.search(QUERY, top_k=3, mmr=True)
    assert result.mmr and result.total == 3
    assert all("mmr_score" in hit for hit in result.results)


# The request: checked once, where it comes in (the API's body, the CLI's options)

REQUEST_REFUSALS = [
    ({"query": QUERY, "strategy": "grep"}, 'strategy must be one of "fts", "vector", "hybrid"'),
    ({"query": QUERY, "mmr_lambda": 1.5}, "mmr_lambda must be a number from 0 to 1, got 1.5"),
    ({"query": QUERY, "alpha": -0.1}, "alpha must be a number from 0 to 1, got -0.1"),
    ({"query": QUERY, "top_k": MAX_TOP_K + 1}, f"top_k must be at most {MAX_TOP_K}"),
    ({"query": QUERY, "top_k": 0}, "top_k must be a positive integer, got 0"),
    ({"query": "   "}, 'query must be a non-empty string, got "   "'),
    ({"query": "x" * (MAX_QUERY_CHARS + 1)}, f"query must be at most {MAX_QUERY_CHARS} characters"),
    ({"query": "\ud800"}, "query must be Unicode text"),
    ({}, "query is required"),
    ({"query": QUERY, "top_K": 3}, "top_K is not a known key; the top level takes query, top_k"),
]


@pytest.mark.parametrize(("body", "expected"), REQUEST_REFUSALS)
def test_a_search_request_out_of_its_declared_limits_is_refused_naming_the_field(body, expected):
    with pytest.raises(Invalid) as info:
        convert(body, SearchRequest)
    assert str(info.value).startswith(expected), str(info.value)


def test_a_search_request_takes_nulls_as_the_defaults():
    request = convert({"query": QUERY, "top_k": None, "strategy": None}, SearchRequest)
    assert request == SearchRequest(QUERY)


async def test_options_left_out_come_from_settings(mesh: Mesh):
    turn_on_mmr_in_settings(mesh.home("a"))
    node, _ = await coffee_node(mesh)
    assert (await node.search(QUERY)).mmr
    assert not (await node.search(QUERY, mmr=False)).mmr


async def test_a_long_query_leans_on_its_words_unless_the_search_gives_alpha(mesh: Mesh):
    """Without ``alpha`` a query of five words or more weighs the vector leg at most
    LONG_QUERY_ALPHA (storage/search/fusion.py); an ``alpha`` given is used as given."""
    node, _ = await coffee_node(mesh)
    long_query = "coffee from ethiopian beans roasted at the corner cafe"

    def scores(result: SearchResult) -> list[tuple[str, float]]:
        return [(h["id"], h["relevance"]) for h in result.results]

    default = await node.search(long_query, strategy="hybrid")
    leaning = await node.search(long_query, strategy="hybrid", alpha=LONG_QUERY_ALPHA)
    asked = await node.search(long_query, strategy="hybrid", alpha=DEFAULT_ALPHA)
    assert scores(default) == scores(leaning)
    assert scores(asked) != scores(default)
    short = await node.search(QUERY, strategy="hybrid")
    assert scores(short) == scores(await node.search(QUERY, strategy="hybrid", alpha=DEFAULT_ALPHA))


async def test_a_turn_said_by_the_person_the_question_names_comes_first(mesh: Mesh):
    """Issue 25: two remembered turns with the same words, one said by Ann and one said to her,
    score alike in both legs; the question names Ann, so hers gains the speaker cue. Hers is
    written first: without the cue the younger turn would win the tie by its age."""
    node = await mesh.open("a", embedder=HashingEmbedder(256))
    by_ann = await node.add_episode("s1", "[8 May, 2023] Ann: the pottery class was fun, Bo")
    to_ann = await node.add_episode("s2", "[8 May, 2023] Bo: Ann, the pottery class was fun")
    await node.embed_queued()
    result = await node.search("What did Ann say about the pottery class?", strategy="hybrid")
    relevance = {hit["id"]: hit["relevance"] for hit in result.results}
    assert [hit["id"] for hit in result.results] == [by_ann["id"], to_ann["id"]]
    # the cue, and the reranker's weight on it (storage/search/rerank.py): at least the cue
    assert relevance[by_ann["id"]] - relevance[to_ann["id"]] >= SPEAKER_CUE - 1e-6


async def test_a_weak_turn_of_the_sitting_where_the_best_hits_were_said_comes_before_its_equal(
    mesh: Mesh,
):
    """Issue 25: two turns of 8 May hold the question's words; a turn of the same sitting that
    holds one of them comes before the same words said on 9 May in another session (neither
    lends nor borrows a neighbour's share), which is written later and would win the tie by its
    age without the sitting cue."""
    node = await mesh.open("a", embedder=HashingEmbedder(256))
    await node.add_episode("chat", "[8 May] Ann: the pottery class with the teacher was fun")
    await node.add_episode("chat", "[8 May] Bo: which pottery class and which teacher?")
    await node.add_episode("elsewhere", "[8 May] Zed: hello")
    answer = await node.add_episode("chat", "[8 May] Ann: Matt, on Thursday evenings")
    other = await node.add_episode("later", "[9 May] Cy: Matt, on Thursday evenings")
    await node.embed_queued()
    result = await node.search("pottery class teacher Thursday", strategy="hybrid")
    ranked = [hit["id"] for hit in result.results]
    assert ranked.index(answer["id"]) < ranked.index(other["id"])


async def test_a_remembered_turn_is_reordered_by_the_reranker_and_a_note_is_not(mesh: Mesh):
    """Issue 25: two turns with the same words score alike in both legs; the reranker's weight
    on a question said back (storage/search/rerank_weights.py, negative) puts the statement
    first, though it is written first and would lose the tie by its age. The same two without
    a date stamp are notes, not turns: the younger wins, as before."""
    node = await mesh.open("a", embedder=HashingEmbedder(256))
    said = await node.add_episode("s1", "[8 May, 2023] Ann: the pottery class was fun")
    asked = await node.add_episode("s2", "[8 May, 2023] Ann: the pottery class was fun?")
    older = await node.add_episode("s3", "notes: the pottery club was fun")
    younger = await node.add_episode("s4", "notes: the pottery club was fun?")
    await node.embed_queued()
    turns = await node.search("pottery class", strategy="hybrid")
    assert [hit["id"] for hit in turns.results][:2] == [said["id"], asked["id"]]
    notes = await node.search("pottery club notes", strategy="hybrid")
    assert [hit["id"] for hit in notes.results][:2] == [younger["id"], older["id"]]
