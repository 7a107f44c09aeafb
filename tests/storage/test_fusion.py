"""storage/search/fusion.py: each leg min-max normalised over its pool, lexical strength weighted by
the share of the query's words a hit holds, the vector weight ``alpha``, and the noise dropped.

These replace the tests of the old ``merge_hybrid`` (``alpha * cosine + (1 - alpha) *
max-normalised BM25``), whose figures no longer hold: a blended score is now computed from
each leg's pool-normalised score, so ``both`` in the old test no longer scores exactly 0.55, and
a candidate last in both pools scores 0 and is dropped as noise instead of returned.
"""

from __future__ import annotations

import pytest

from feral.storage.search.fusion import (
    LONG_QUERY_ALPHA,
    MIN_COSINE_SPAN,
    NOISE_FLOOR,
    SPEAKER_CUE,
    TEMPORAL_CUE,
    alpha_for,
    asks_when,
    fuse,
    fusion_pool_size,
    lexical_weight,
    min_max,
    speaker_cue,
    temporal_cue,
    term_coverage,
)
from feral.storage.search.query import Hit, cosines_of, search_fts, search_vector
from feral.storage.vectors.vectors import pack_vector

from .support import Replica
from .test_search import a, embedded, ids  # noqa: F401  (the fixture)


def note(row_id: str, text: str, fts: float = 0.0, vector: float = 0.0) -> Hit:
    row = {"id": row_id, "table": "facts", "subject": "user", "predicate": "note", "object": text}
    return Hit(row, fts_score=fts, vector_score=vector)


QUERY = "vet appointment for the dog"
FULL = 3
"""Each leg below returns three candidates: asked for three, its pool is full (min-max)."""


def legs() -> tuple[list[Hit], list[Hit]]:
    """A lexical distractor tops BM25 by a wide margin (rare words, a short text) with two of the
    query's three words; ``both`` holds every word of the query and is the nearest in meaning;
    ``meaning`` shares no word at all."""
    fts = [
        note("lexical", "the dog's vet bill", fts=1.0),
        note("both", "vet appointment for the dog on Friday", fts=0.4),
        note("weak", "the dog barked", fts=0.1),
    ]
    vector = [
        note("both", "vet appointment for the dog on Friday", vector=0.62),
        note("meaning", "took Biscuit to the animal clinic", vector=0.58),
        note("far", "bought a new kettle", vector=0.30),
    ]
    return fts, vector


def test_min_max_spans_a_full_pool_and_an_empty_or_flat_pool_spans_nothing():
    assert min_max([0.2, 0.6, 0.4], pool=3) == (0.2, pytest.approx(0.4))
    assert min_max([], pool=3) == (0.0, 0.0)
    assert min_max([0.5, 0.5], pool=2) == (0.5, 0.0)


def test_a_leg_short_of_its_pool_has_every_match_so_its_floor_is_zero():
    assert min_max([0.2, 0.6, 0.4], pool=50) == (0.0, 0.6)


def test_in_a_small_store_the_last_of_three_matches_is_not_noise():
    fts = [note("a", "dog vet", fts=1.0), note("b", "dog vet", fts=0.9), note("c", "dog", fts=0.4)]
    vector = [note("a", "", vector=0.7), note("b", "", vector=0.69), note("c", "", vector=0.5)]
    assert ids(fuse("dog vet", fts, vector, alpha=0.6, limit=10, pool=50)) == ["a", "b", "c"]


def test_a_lexical_distractor_that_tops_bm25_does_not_outrank_a_hit_strong_in_both_legs():
    fts, vector = legs()
    fused = fuse(QUERY, fts, vector, alpha=0.6, limit=10, pool=FULL)
    assert ids(fused)[0] == "both"
    assert ids(fused).index("meaning") < ids(fused).index("lexical")


def test_a_distractor_sharing_one_word_of_three_and_no_meaning_is_noise():
    fts = [
        note("hair", "dog hair on the sofa", fts=1.0),
        note("both", "vet appointment dog", fts=0.5),
    ]
    vector = [note("both", "", vector=0.6), note("far", "", vector=0.02)]
    assert ids(fuse(QUERY, fts, vector, alpha=0.6, limit=10, pool=2)) == ["both"]


def test_with_max_normalisation_the_distractor_would_have_won():
    """The old blend, for contrast: the distractor's BM25 of 1.0 beats a 0.05 cosine gap."""
    old = {"lexical": 0.5 * 0.35 + 0.5 * 1.0, "both": 0.5 * 0.62 + 0.5 * 0.4}
    assert old["lexical"] > old["both"]


def test_alpha_one_is_the_vector_order_and_zero_the_weighted_lexical_order():
    fts, vector = legs()
    vector_only = fuse(QUERY, fts, vector, alpha=1.0, limit=10, pool=FULL)
    assert ids(vector_only)[:2] == ["both", "meaning"]
    fts, vector = legs()
    lexical_only = fuse(QUERY, fts, [], alpha=0.0, limit=10, pool=FULL)
    assert ids(lexical_only) == ["lexical", "both"]  # "weak", one word of three, is noise


def test_a_lexical_hit_missing_from_the_vector_leg_scores_zero_in_it():
    fts, vector = legs()
    fused = {h.id: h for h in fuse(QUERY, fts, vector, alpha=0.6, limit=10, pool=FULL)}
    assert fused["lexical"].vector_score == 0.0  # below the whole vector pool
    assert fused["lexical"].score == pytest.approx(0.4 * lexical_weight(QUERY, fused["lexical"]))


def test_candidates_near_nothing_in_both_legs_are_dropped_as_noise():
    """The vector leg is scaled from cosine 0, so its weakest candidate is noise only when it
    is near nothing in meaning, not for being last in the pool."""
    fts, vector = legs()
    vector[2].vector_score = 0.04
    fused = fuse(QUERY, fts, vector, alpha=0.6, limit=10, pool=FULL)
    assert "far" not in ids(fused) and "weak" not in ids(fused)
    assert all(h.score >= NOISE_FLOOR for h in fused)
    assert [h.score for h in fused] == sorted((h.score for h in fused), reverse=True)


def test_term_coverage_counts_the_query_words_a_hit_holds():
    assert term_coverage(QUERY, note("x", "Vet appointment: the DOG")) == 1.0
    assert term_coverage(QUERY, note("x", "dog hair")) == pytest.approx(1 / 3)
    assert term_coverage("the", note("x", "the end")) == 1.0  # only stop words: count them


def test_a_hit_with_a_third_of_the_query_words_weighs_a_ninth():
    assert lexical_weight(QUERY, note("x", "dog hair")) == pytest.approx(1 / 9)
    assert lexical_weight(QUERY, note("x", "the vet, the appointment, the dog")) == 1.0


def test_the_fusion_pool_is_deeper_than_a_short_page():
    assert fusion_pool_size(5) == 50
    assert fusion_pool_size(200) == 200


def test_ties_go_by_id_and_the_limit_holds():
    tied = [note("b", "dog", fts=0.5), note("a", "dog", fts=0.5)]
    assert ids(fuse("dog", tied, [], alpha=0.0, limit=1, pool=2)) == ["a"]


def test_hybrid_over_real_legs_returns_each_row_once(a: Replica):  # noqa: F811
    embedder = embedded(a.conn)
    fts = search_fts(a.conn, "doctor", 10)
    vector = search_vector(a.conn, pack_vector(embedder.embed(["doctor"])[0], 64), 10)
    union = set(ids(fts)) | set(ids(vector))
    merged = fuse("doctor", fts, vector, alpha=0.3, limit=10, pool=10)
    assert len(ids(merged)) == len(set(ids(merged))) and set(ids(merged)) <= union
    assert all(NOISE_FLOOR <= h.score <= 1.0 for h in merged)


# Rows not embedded yet (embedding runs off the write path): the vector leg cannot see them


def test_with_nothing_embedded_yet_hybrid_is_the_full_text_order_with_nothing_dropped():
    weak = note("w", "the dog slept", fts=1.0)  # one word of three: noise in a blend
    strong = note("s", "vet appointment for the dog on friday", fts=3.0)
    hits = fuse(QUERY, [strong, weak], [], 0.6, 5, fusion_pool_size(5), waiting={"s", "w"})
    assert [h.id for h in hits] == ["s", "w"]


def test_a_lexical_hit_still_queued_is_judged_by_its_lexical_score_in_both_legs():
    queued = note("q", "vet appointment for the dog", fts=2.0)
    embedded_hit = note("e", "a checkup for the puppy", vector=0.9)
    other = note("o", "the cat's dinner", vector=0.2)
    hits = fuse(QUERY, [queued], [embedded_hit, other], 0.6, 5, FULL, waiting={"q"})
    assert hits[0].id == "q"  # without the estimate it would score 0.4 and rank below "e"


def test_a_vector_leg_that_barely_tells_its_candidates_apart_does_not_outvote_the_words():
    """Issue 25: on conversations a question is about as near to many turns; min-max alone
    stretched cosines 0.50 to 0.53 over the whole range and the turn holding every word of the
    question fell below a turn holding none. The span floor keeps close cosines close."""
    query = "pottery class thursday"
    fts = [
        note("words", "the pottery class is on thursday", fts=1.0),
        note("some", "a class on monday", fts=0.5),
        note("few", "thursday again", fts=0.4),
    ]
    vector = [
        note("near", "I love making things with my hands", vector=0.53),
        note("words", "the pottery class is on thursday", vector=0.51),
        note("far", "a walk by the sea", vector=0.50),
    ]
    assert MIN_COSINE_SPAN >= 0.3
    kept_close = fuse(query, fts, vector, alpha=0.65, limit=3, pool=FULL)
    assert ids(kept_close)[0] == "words"
    near = next(h for h in kept_close if h.id == "near")
    assert near.score == pytest.approx(0.65)  # the best cosine and no word of the query


def turn(row_id: str, text: str, score: float) -> Hit:
    row = {"id": row_id, "table": "episodes", "summary": text}
    return Hit(row, score=score)


def turns() -> list[Hit]:
    return [
        turn("matches", "[8 May, 2023] Ann: the support group was so moving", 0.50),
        turn("said-when", "[8 May, 2023] Ann: I went to a support group yesterday", 0.45),
        turn("stamp-only", "[9 May, 2023] Bo: support groups help", 0.44),
    ]


@pytest.mark.parametrize(
    ("query", "asks"),
    [
        ("When did Ann go to the support group?", True),
        ("What year did Bo move?", True),
        ("How long has Ann painted?", True),
        ("What did Ann research?", False),
        ("whenever", False),
    ],
)
def test_a_query_asks_when_by_its_question_words(query, asks):
    assert asks_when(query) is asks


def test_a_when_question_raises_the_turns_that_say_a_time_and_not_their_date_stamp():
    """Issue 25: every remembered turn carries its date in a leading stamp, so the stamp tells
    nothing apart; "yesterday" in what was said does."""
    ranked = temporal_cue("When did Ann go to the support group?", turns())
    assert [h.id for h in ranked] == ["said-when", "matches", "stamp-only"]
    assert ranked[0].score == pytest.approx(0.45 + TEMPORAL_CUE)
    assert ranked[2].score == 0.44


def test_a_question_that_does_not_ask_when_keeps_its_order_and_scores():
    ranked = temporal_cue("What did Ann say about the support group?", turns())
    assert [(h.id, h.score) for h in ranked] == [(h.id, h.score) for h in turns()]


def test_a_query_of_five_words_or_more_weighs_the_vector_leg_at_most_the_long_querys_alpha():
    assert alpha_for("vet appointment dog friday", 0.65) == 0.65  # four words
    assert alpha_for("vet appointment for the dog on friday morning", 0.65) == LONG_QUERY_ALPHA
    assert alpha_for("vet appointment dog friday morning", 0.3) == 0.3  # never raised
    assert alpha_for("dog Dog DOG dog dog", 0.65) == 0.65  # one word said five times
    assert alpha_for("what did the vet say about the dog when it was here", 0.65) == 0.65


def test_a_lexical_candidate_the_vector_leg_did_not_return_keeps_its_own_cosine():
    """Issue 25: a turn holding the question's words but just below the vector leg's pool
    scored 0 in it, as if it meant nothing; its own cosine, on the leg's scale from 0, counts."""
    fts, vector = legs()
    fused = {h.id: h for h in fuse(QUERY, fts, vector, 0.6, 10, FULL, cosines={"lexical": 0.31})}
    assert fused["lexical"].vector_score == 0.31
    weighted = 0.4 * lexical_weight(QUERY, fused["lexical"])
    assert fused["lexical"].score == pytest.approx(0.6 * 0.31 / 0.62 + weighted)
    fts, vector = legs()
    unknown = {h.id: h for h in fuse(QUERY, fts, vector, 0.6, 10, FULL)}
    assert unknown["lexical"].score == pytest.approx(weighted)


def test_the_vector_leg_is_scaled_from_cosine_zero_so_its_last_candidate_keeps_its_weight():
    fts, vector = legs()
    fused = {h.id: h for h in fuse(QUERY, fts, vector, alpha=1.0, limit=10, pool=FULL)}
    assert fused["both"].score == pytest.approx(1.0)
    assert fused["far"].score == pytest.approx(0.30 / 0.62)


def test_a_turn_said_by_the_person_the_query_names_is_raised_by_the_speaker_cue():
    """Issue 25: "What did Ann say about the support group?" is answered by Ann's turns; Bo's
    turn naming Ann is said to her, and a note without a speaker is left as it was."""
    hits = [
        turn("to-ann", "[8 May, 2023] Bo: Ann, the support group was moving", 0.50),
        turn("by-ann", "[8 May, 2023] Ann: the support group helped me", 0.47),
        turn("plain", "Ann: no date stamp, so not a remembered turn", 0.46),
    ]
    ranked = speaker_cue("What did Ann say about the support group?", hits)
    assert [h.id for h in ranked] == ["by-ann", "to-ann", "plain"]
    assert ranked[0].score == pytest.approx(0.47 + SPEAKER_CUE)
    assert [h.score for h in speaker_cue("support group", turns())] == [0.50, 0.45, 0.44]


def test_a_lexical_candidates_cosine_is_the_one_the_vector_leg_gives_the_same_row(a: Replica):  # noqa: F811
    embedder = embedded(a.conn)
    query = pack_vector(embedder.embed(["doctor"])[0], 64)
    every = search_vector(a.conn, query, 10)
    found = cosines_of(a.conn, query, search_fts(a.conn, "doctor", 10))
    assert found and found == pytest.approx({h.id: h.vector_score for h in every if h.id in found})
    assert cosines_of(a.conn, pack_vector([0.0] * 64, 64), every) == {}
