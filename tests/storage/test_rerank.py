"""storage/search/rerank.py: remembered chat turns rescored by the weights fitted on
conversations (benchmarks/rerank_fit.py); every other memory keeps its fused score."""

from __future__ import annotations

import pytest

from feral.storage.search.query import Hit
from feral.storage.search.rerank import FEATURES, LIFT, is_turn, rerank, turn_features
from feral.storage.search.rerank_weights import CENTRES, WEIGHTS


def turn(row_id: str, text: str, score: float, **parts: float) -> Hit:
    row = {"id": row_id, "table": "episodes", "session_id": "s", "summary": text}
    hit = Hit(row, score=score)
    hit.parts.update(parts)
    return hit


def fact(row_id: str, score: float) -> Hit:
    row = {"id": row_id, "table": "facts", "subject": "user", "predicate": "likes", "object": "tea"}
    return Hit(row, score=score)


def test_only_an_episode_with_a_date_stamp_and_a_speaker_is_a_turn():
    assert is_turn(turn("a", "[8 May, 2023] Ann: I went hiking", 0.5))
    assert not is_turn(turn("b", "went hiking with Ann", 0.5))
    assert not is_turn(fact("c", 0.5))


def test_a_turn_rises_by_its_weighed_features_and_a_fact_keeps_its_score():
    """Hand-made weights: a turn the question's speaker said (``speaker`` 1) gains the lift of
    that weight over the ``score`` weight; two equal turns are ordered as the weights say."""
    weights = {"score": 2.0, "speaker": 1.0}
    plain = turn("a", "[8 May] Bo: the pottery class", 0.4)
    said = turn("b", "[8 May] Ann: the pottery class", 0.4, speaker=1.0)
    other = fact("c", 0.45)
    ranked = rerank("q", [plain, said, other], 10, weights, {}, lift=1.0)
    assert [h.id for h in ranked] == ["b", "c", "a"]
    assert said.score == pytest.approx(0.4 + 1.0 / 2.0)
    assert plain.score == pytest.approx(0.4) and other.score == pytest.approx(0.45)


def test_a_negative_weight_lowers_a_turn_but_never_below_zero():
    weights = {"score": 1.0, "asks": -2.0}
    asking = turn("a", "[8 May] Bo: did you go?", 0.3)
    telling = turn("b", "[8 May] Ann: I went", 0.2)
    ranked = rerank("q", [asking, telling], 10, weights, {}, lift=0.5)
    assert [h.id for h in ranked] == ["b", "a"]
    assert asking.score == 0.0


def test_the_lift_is_measured_from_the_fitted_candidates_average():
    """A turn whose features are the centres keeps its score: the average turn does not move."""
    weights = {"score": 1.0, "beside": 3.0}
    hit = turn("a", "[8 May] Ann: yes", 0.3, beside=0.2)
    rerank("q", [hit], 10, weights, {"beside": 0.2}, lift=1.0)
    assert hit.score == pytest.approx(0.3)


def test_without_weights_the_fused_order_stands():
    hits = [turn("a", "[8 May] Ann: one", 0.2), turn("b", "[8 May] Bo: two", 0.3)]
    assert [h.id for h in rerank("q", hits, 10, {}, {})] == ["b", "a"]
    assert [h.score for h in hits] == [0.2, 0.3]


def test_the_shipped_weights_name_every_feature_once_and_rank_by_the_fused_score_first():
    assert set(WEIGHTS) == set(FEATURES) == set(CENTRES)
    assert WEIGHTS["score"] > 0
    assert 0 < LIFT <= 1


def test_with_the_shipped_weights_a_reply_after_a_hit_said_by_the_named_speaker_rises():
    """Two turns with equal fused scores and words: the one the question's speaker said, beside
    a good hit, comes first; the question asked back comes last."""
    reply = turn("a", "[8 May] Ann: sorting donations", 0.3, speaker=1.0, beside=0.6)
    same = turn("b", "[8 May] Bo: sorting donations", 0.3)
    asked = turn("c", "[8 May] Bo: sorting donations?", 0.3)
    assert [h.id for h in rerank("q", [asked, same, reply], 10)] == ["a", "b", "c"]


def test_features_are_one_row_per_turn_in_the_features_order():
    hits = [turn("a", "[8 May] Ann: two words", 0.5, cosine=0.4), fact("b", 1.0)]
    rows = turn_features("two words", hits, hits[:1])
    assert len(rows) == 1 and len(rows[0]) == len(FEATURES)
    assert rows[0][FEATURES.index("score_share")] == pytest.approx(0.5)
    assert rows[0][FEATURES.index("score")] == 0.5
