"""The turn reranker's fit (``python -m benchmarks rerank``, benchmarks/rerank_fit.py) on our own
synthetic conversations: the tuning half only, the same weights from the same data, and a
weights file that reads back as the module the search imports."""

from __future__ import annotations

import pytest

from benchmarks.conversation_set import load_conversations, split_of
from benchmarks.rerank_fit import (
    Question,
    collect,
    cross_validate,
    fit,
    fused_order,
    measure,
    render_weights,
)
from feral.storage.search.rerank import FEATURES


@pytest.fixture(scope="module")
def questions() -> list[Question]:
    return collect(load_conversations())


@pytest.mark.slow
def test_only_the_tuning_half_is_read_and_every_candidate_has_every_feature(questions):
    conversations = load_conversations()
    tune = {c.sample_id for i, c in enumerate(conversations) if split_of(i) == "tune"}
    assert {q.conversation for q in questions} == tune
    assert all(len(row) == len(FEATURES) for q in questions for row in q.rows)
    assert any(any(q.evidence) for q in questions)


@pytest.mark.slow
def test_the_fit_is_deterministic_and_ranks_its_data_at_least_as_well_as_the_fused_order(
    questions,
):
    weights = fit(questions, steps=100)
    assert weights == fit(questions, steps=100)
    assert measure(questions, weights)[1] >= measure(questions, fused_order())[1]
    assert len(cross_validate(questions)) == 3


def test_ranking_follows_the_weights():
    question = Question("c", [[0.9, 0.0], [0.1, 1.0]], [False, True], wanted=2)
    assert measure([question], [1.0, 0.0])[2] == 0.5  # the evidence second: MRR 1/2
    assert measure([question], [0.0, 1.0])[2] == 1.0
    assert measure([question], [0.0, 1.0])[1] == 0.5  # one of two evidence turns found


def test_the_weights_file_is_python_naming_every_feature():
    text = render_weights([0.5] * len(FEATURES), [0.25] * len(FEATURES), "A note.")
    space: dict[str, object] = {}
    exec(compile(text, "rerank_weights.py", "exec"), space)  # noqa: S102
    assert space["WEIGHTS"] == dict.fromkeys(FEATURES, 0.5)
    assert space["CENTRES"] == dict.fromkeys(FEATURES, 0.25)
