"""The household retrieval set keeps its shape, and its paraphrases stay paraphrases.

Every paraphrase query is checked mechanically against its memory: no content word (after a
crude stem, and counting a word that begins another as shared) in common. A reworded query that
slipped a memory's word back in would make the set easier without anyone noticing.
"""

from __future__ import annotations

from collections import Counter

import pytest

from benchmarks.__main__ import main
from benchmarks.retrieval_bench import score_ranking
from benchmarks.retrieval_set import (
    content_words,
    load_memories,
    load_queries,
    shared_content_words,
)

MEMORIES = {m.id: m for m in load_memories()}
QUERIES = load_queries()


def test_the_set_is_as_large_as_the_issue_asks():
    types = Counter(q.type for q in QUERIES)
    assert len(MEMORIES) >= 300
    assert len(QUERIES) >= 150
    assert set(types) == {"paraphrase", "keyword", "multi", "graph"}
    assert min(types[t] for t in ("paraphrase", "keyword", "multi")) >= 40
    assert types["graph"] >= 10


def test_ids_are_unique_and_every_answer_is_a_memory():
    assert len(MEMORIES) == len(load_memories())
    assert len({q.id for q in QUERIES}) == len(QUERIES)
    for query in QUERIES:
        assert query.relevant and set(query.relevant) <= set(MEMORIES), query.id


@pytest.mark.parametrize("query", [q for q in QUERIES if q.type == "paraphrase"], ids=str)
def test_a_paraphrase_shares_no_content_word_with_its_memory(query):
    (target,) = query.relevant
    assert shared_content_words(query.query, MEMORIES[target].text) == [], query.id


def test_a_keyword_query_shares_words_with_its_memory():
    for query in (q for q in QUERIES if q.type == "keyword"):
        (target,) = query.relevant
        assert shared_content_words(query.query, MEMORIES[target].text), query.id


def test_a_multi_answer_query_has_several_answers():
    for query in (q for q in QUERIES if q.type == "multi"):
        assert len(set(query.relevant)) >= 2, query.id


def test_the_check_counts_inflections_and_prefixes_as_shared_words():
    assert shared_content_words("feeding the dog", "feed the dogs") == [
        ("dog", "dog"),
        ("feed", "feed"),
    ]
    assert shared_content_words("heart doctor", "irregular heartbeat")
    assert shared_content_words("what is it about", "it is about what") == []
    assert content_words("Dr. Patel's 9:15 check-up") == {"dr", "patel", "check"}


def test_recall_counts_at_most_five_answers_and_rr_the_first_hit():
    assert score_ranking(["x", "a", "y"], ["a"]) == (1.0, 0.5)
    assert score_ranking(list("abcdefg"), list("abcdefg")) == (1.0, 1.0)
    assert score_ranking(["x"] * 10 + ["a"], ["a", "b"]) == (0.0, 0.0)
    assert score_ranking(["x", "a", "y", "b"], ["a", "b", "c", "d"]) == (0.5, 0.5)


def test_the_retrieval_benchmark_prints_a_table_per_embedder_and_strategy(capsys):
    assert main(["retrieval", "--embedder", "none"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "| embedder | strategy | paraphrase | keyword | multi | graph | overall |"
    assert lines[2].startswith("| none | fts | 0.00 / ")
