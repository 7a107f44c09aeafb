"""Search finds the memory: issue #12's targets on the household set, with the default settings.

The default embedder and strategy run over the whole set (benchmarks/retrieval_bench.py, through
``Node.search`` on a real database file), and the figures must meet the targets the *Retrieval
quality* section of benchmarks/README.md reports: paraphrases (no content word in common) recall@5
at least 0.90, keywords 0.98, overall 0.93, MRR@10 0.88; and hybrid at least as good as the better
of its two legs on every query type. The model and the data are fixed, so the figures are too: a
change to the fusion or the encoder that costs recall fails here, not in a user's search.
"""

from __future__ import annotations

import pytest

from benchmarks.retrieval_bench import CONFIGS, run_retrieval
from benchmarks.retrieval_set import QUERY_TYPES
from feral.storage.encoders.embedders import DEFAULT_EMBEDDER

pytestmark = pytest.mark.slow  # the whole benchmark set through search: a benchmark run


@pytest.fixture(scope="module")
def scores() -> dict[str, dict[str, tuple[float, float]]]:
    plain = [c for c in CONFIGS if not c.mmr]
    return {run.config: run.scores for run in run_retrieval([DEFAULT_EMBEDDER], configs=plain)}


def test_the_default_search_meets_the_recall_targets(scores):
    hybrid = scores["hybrid"]
    assert hybrid["paraphrase"][0] >= 0.90
    assert hybrid["keyword"][0] >= 0.98
    assert hybrid["overall"][0] >= 0.93
    assert hybrid["overall"][1] >= 0.88


def test_queries_naming_a_relation_path_follow_the_graph(scores):
    """Issue 14: "my son's school" resolves through the stored facts before ranking. Without
    that step the same queries scored 0.54 recall@5 and 0.34 MRR@10 with hybrid."""
    for config in ("fts", "vector", "hybrid"):
        assert scores[config]["graph"][0] >= 0.95, config
        assert scores[config]["graph"][1] >= 0.95, config


@pytest.mark.parametrize("query_type", QUERY_TYPES)
def test_hybrid_is_at_least_as_good_as_its_better_leg(scores, query_type):
    """Issue 25's bar: hybrid at least its better leg less 0.01 on every query type and measure.
    It was exact until the turns beside the best hits joined the ranking
    (storage/search/neighbours.py): the household episodes are one session, so a neighbour sometimes
    passes a paraphrase's memory (MRR@10 0.863 against the vector leg's 0.869), while
    paraphrase recall@5 gains (0.975 against 0.9625) and so do queries with several answers
    (recall@5 0.83 against 0.80 without the neighbours)."""
    for measure in (0, 1):  # recall@5, MRR@10
        best_leg = max(scores["fts"][query_type][measure], scores["vector"][query_type][measure])
        assert scores["hybrid"][query_type][measure] >= best_leg - 0.01, (query_type, measure)


def test_paraphrases_keep_their_recall(scores):
    """Issue 25: whatever lifts recall on conversations keeps the household paraphrases'
    recall@5 at 0.95 or more."""
    assert scores["hybrid"]["paraphrase"][0] >= 0.95
