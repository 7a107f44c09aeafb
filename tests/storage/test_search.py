"""storage/search/query.py: safe FTS5 queries, scores in [0, 1], hidden rows, and MMR.

The tests of the hybrid blend moved to test_fusion.py with the blend itself
(storage/search/fusion.py).
"""

from __future__ import annotations

import pytest

from feral.storage.db.connection import Connection
from feral.storage.search.query import (
    Hit,
    content_of,
    fts_query,
    hit_vectors,
    mmr_pool_size,
    mmr_rerank,
    search_fts,
    search_vector,
)
from feral.storage.store import run_write
from feral.storage.vectors.vectors import embed_pending, pack_vector
from tests.embedders import HashingEmbedder

from .support import A, Replica

HOSTILE = [
    'doctor\'s "appointment" OR NEAR(',
    '"',
    '""""',
    "NEAR(a b",
    "AND OR NOT",
    "col:doctor",
    "subject:doctor",
    "doc*",
    "^doctor",
    "-doctor +chen",
    "(((",
    "doctor) OR (1=1",
    "'; DROP TABLE facts; --",
    "\x00doctor",
    "Dr.\u200bChen",
    "مرحبا doctor",
]


@pytest.fixture
def a(make_replica) -> Replica:
    replica = make_replica("a", A)
    replica.remember("Dr. Chen", "is", "my doctor")
    replica.remember("appointment", "is on", "Tuesday at the doctor's")
    replica.remember("the dog", "likes", "the park")
    replica.episode("booked a doctor appointment for Tuesday", ["Dr. Chen"])
    replica.episode("walked the dog in the park", ["dog", "park"])
    return replica


def embedded(conn: Connection, dim: int = 64) -> HashingEmbedder:
    embedder = HashingEmbedder(dim)
    while run_write(conn, embed_pending, embedder):
        pass
    return embedder


def ids(hits: list[Hit]) -> list[str]:
    return [h.id for h in hits]


def test_fts_query_quotes_every_word_and_joins_them_with_or():
    assert fts_query('doctor\'s "appointment" OR NEAR(') == (
        '"doctor" OR "s" OR "appointment" OR "NEAR"'
    )
    assert fts_query("") is None
    assert fts_query(" ?! -- ") is None


def test_fts_query_leaves_out_stop_words_unless_nothing_else_remains():
    assert fts_query("What did Priya say about the budget?") == '"Priya" OR "say" OR "budget"'
    assert fts_query("to be or not to be") == '"to" OR "be" OR "or" OR "not" OR "to" OR "be"'


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_query_text_never_raises(a: Replica, text: str):
    for hit in search_fts(a.conn, text, 10):
        assert 0.0 <= hit.fts_score <= 1.0


def test_punctuation_only_queries_find_nothing(a: Replica):
    assert search_fts(a.conn, "?!", 10) == []


def test_fts_finds_facts_and_episodes_with_scores_in_the_unit_interval_best_first(a: Replica):
    hits = search_fts(a.conn, "doctor appointment", 10)
    assert {h.row["table"] for h in hits} == {"facts", "episodes"}
    scores = [h.fts_score for h in hits]
    assert all(0.0 < s <= 1.0 for s in scores)
    assert scores[0] == 1.0  # the best match of the query scores 1 (BM25 over the best BM25)
    assert scores == sorted(scores, reverse=True)
    best = content_of(hits[0].row)
    assert "doctor" in best and "appointment" in best
    assert "the park" not in {h.row.get("object") for h in hits}


def test_episodes_are_found_by_stem_and_each_hit_knows_the_share_of_query_words_it_holds(
    a: Replica,
):
    """Issue 25: the episodes' index stems (migration 0018), and the share of the query's words
    a hit holds is what that index matched, so a fused score weighs "walking" as "walked"."""
    found = search_fts(a.conn, "walking dogs park", 10, coverage=True)
    hits = {content_of(h.row): h for h in found}
    assert hits["walked the dog in the park"].coverage == 1.0
    assert hits["the dog likes the park"].coverage == pytest.approx(1 / 3)  # facts: exact words


def test_fts_respects_the_limit(a: Replica):
    assert len(search_fts(a.conn, "doctor appointment dog park", 2)) == 2


def test_archived_and_deleted_rows_are_never_returned(a: Replica):
    embedder = embedded(a.conn)
    before = search_fts(a.conn, "doctor", 10)
    archived, nuked = before[0].id, before[1].id
    a.archive(archived)
    a.nuke(nuked)
    embedded(a.conn)
    found = ids(search_fts(a.conn, "doctor", 10))
    found += ids(search_vector(a.conn, pack_vector(embedder.embed(["doctor"])[0], 64), 10))
    assert archived not in found and nuked not in found
    a.restore(archived)
    assert archived in ids(search_fts(a.conn, "doctor", 10))


def test_vector_search_scores_lie_in_the_unit_interval_best_first(a: Replica):
    embedder = embedded(a.conn)
    hits = search_vector(a.conn, pack_vector(embedder.embed(["walk the dog"])[0], 64), 10)
    scores = [h.vector_score for h in hits]
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert scores == sorted(scores, reverse=True)
    assert {content_of(h.row) for h in hits[:2]} == {
        "walked the dog in the park",
        "the dog likes the park",
    }


def hit(row_id: str, fts: float = 0.0, vector: float = 0.0) -> Hit:
    row = {"id": row_id, "table": "facts", "subject": row_id, "predicate": "is", "object": "x"}
    return Hit(row, fts_score=fts, vector_score=vector)


def test_a_hit_renders_the_documented_shape(a: Replica):
    (first, *_) = search_fts(a.conn, "Chen doctor", 10)
    shape = first.as_dict()
    assert set(shape) >= {"id", "tier", "content", "score", "fts_score", "vector_score"}
    assert shape["content"] == content_of(first.row)
    assert "table" not in shape["row"]
    assert shape["tier"] in {"semantic", "episodic"}


# MMR


def scored(row_id: str, score: float) -> Hit:
    found = hit(row_id)
    found.score = score
    return found


# "dup" points almost the same way as "top"; "other" is less relevant but points elsewhere.
MMR_VECTORS = {"top": [1.0, 0.0, 0.0], "dup": [0.99, 0.14, 0.0], "other": [0.0, 0.0, 1.0]}


def mmr_hits() -> list[Hit]:
    return [scored("top", 0.9), scored("dup", 0.85), scored("other", 0.5)]


def test_mmr_picks_a_diverse_second_result_over_a_near_duplicate():
    picked = mmr_rerank(mmr_hits(), MMR_VECTORS, lambda_=0.5, k=3)
    assert ids(picked) == ["top", "other", "dup"]
    assert picked[0].extra["mmr_score"] == pytest.approx(0.45)
    assert picked[1].extra["mmr_score"] == pytest.approx(0.25)
    assert [h.score for h in picked] == [0.9, 0.5, 0.85]  # score stays the relevance


def test_mmr_with_lambda_one_keeps_the_relevance_order_and_respects_k():
    picked = mmr_rerank(mmr_hits()[::-1], MMR_VECTORS, lambda_=1.0, k=2)
    assert ids(picked) == ["top", "dup"]


def test_mmr_treats_a_hit_without_a_vector_as_similar_to_nothing():
    vectors = {"top": MMR_VECTORS["top"], "dup": [0.0, 0.0, 0.0]}
    picked = mmr_rerank(mmr_hits(), vectors, lambda_=0.5, k=3)
    assert ids(picked) == ["top", "dup", "other"]


def test_mmr_refuses_a_lambda_outside_the_unit_interval():
    with pytest.raises(ValueError, match="lambda"):
        mmr_rerank(mmr_hits(), MMR_VECTORS, lambda_=1.5, k=3)


def test_the_mmr_pool_is_larger_than_k_and_bounded():
    assert mmr_pool_size(10) == 40
    assert mmr_pool_size(1000) == 1000
    assert 10 < mmr_pool_size(200) <= 400


def test_hit_vectors_reads_the_stored_embeddings_by_rowid(a: Replica):
    assert hit_vectors(a.conn, search_fts(a.conn, "doctor", 10)) == {}  # no embedder: no vectors
    embedded(a.conn)
    hits = search_fts(a.conn, "doctor", 10)
    vectors = hit_vectors(a.conn, hits)
    assert set(vectors) == set(ids(hits))
    for found in hits:  # each hit's own vector finds that hit first, at similarity 1
        (nearest, *_) = search_vector(a.conn, pack_vector(vectors[found.id], 64), 5)
        assert nearest.id == found.id
        assert nearest.vector_score == pytest.approx(1.0, abs=1e-5)
