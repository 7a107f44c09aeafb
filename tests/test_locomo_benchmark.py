"""The conversation benchmark (``python -m benchmarks locomo``) on our own synthetic set.

LoCoMo itself is CC BY-NC 4.0 and never in the repository; the synthetic conversations in
``benchmarks/conversations/`` have its shape and run here through the same code: the loader,
both baselines, and feral's three strategies through ``Node.search`` on real database files.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.__main__ import main
from benchmarks.conversation_set import (
    CATEGORIES,
    Question,
    Turn,
    load_conversations,
    parse_conversations,
)
from benchmarks.locomo_bench import (
    ALL_METHODS,
    METHODS,
    VIA_INGEST,
    bm25_rankings,
    run_locomo,
    score_question,
    summarise,
)


def _sample(qa: list[dict[str, object]]) -> list[dict[str, object]]:
    turns = [
        {"speaker": "Ann", "dia_id": "D1:1", "text": "I started researching adoption agencies."},
        {"speaker": "Bo", "dia_id": "D1:2", "text": "Good luck with the agencies!"},
    ]
    conversation = {"speaker_a": "Ann", "speaker_b": "Bo", "session_1": turns}
    conversation["session_1_date_time"] = "1:56 pm on 8 May, 2023"
    return [{"sample_id": "s", "conversation": conversation, "qa": qa}]


def test_turns_are_remembered_with_their_date_and_speaker():
    (conversation,) = parse_conversations(_sample([]))
    assert conversation.turns[0].memory == (
        "[1:56 pm on 8 May, 2023] Ann: I started researching adoption agencies."
    )


def test_adversarial_questions_and_unknown_evidence_are_left_out_and_joined_ids_split():
    qa = [
        {"question": "joined", "category": 1, "evidence": ["D1:1; D1:2"]},
        {"question": "adversarial", "category": 5, "evidence": ["D1:1"]},
        {"question": "nowhere", "category": 4, "evidence": ["D9:9"]},
        {"question": "partly", "category": 2, "evidence": ["D1:2", "D7:1"]},
    ]
    (conversation,) = parse_conversations(_sample(qa))
    assert conversation.questions == (
        Question("joined", 1, ("D1:1", "D1:2")),
        Question("partly", 2, ("D1:2",)),
    )


def test_the_synthetic_set_covers_every_category_in_both_splits():
    conversations = load_conversations()
    assert len(conversations) >= 4
    for parity in (0, 1):
        asked = {q.category for c in conversations[parity::2] for q in c.questions}
        assert asked == set(CATEGORIES)


def test_recall_and_hit_count_the_evidence_in_the_first_results():
    ranked = [f"D1:{i}" for i in range(1, 11)]
    assert score_question(ranked, ["D1:2", "D1:7", "D2:1"]) == (1 / 3, 2 / 3, 1.0)
    assert score_question(ranked, ["D3:3"]) == (0.0, 0.0, 0.0)


def test_the_bm25_baseline_stems_words():
    turns = [Turn("D1:1", "Ann", "today", "I started researching adoption agencies.")]
    turns.append(Turn("D1:2", "Bo", "today", "The weather is fine."))
    asked = [Question("What did Ann research?", 4, ("D1:1",))]
    assert bm25_rankings(turns, asked) == [["D1:1"]]


@pytest.fixture(scope="module")
def synthetic_scores():
    return run_locomo(load_conversations(), through="both")


@pytest.mark.parametrize("split", ["all", "tune", "held"])
@pytest.mark.slow
def test_hybrid_is_never_worse_than_its_better_leg_on_the_synthetic_conversations(
    synthetic_scores, split
):
    table = summarise(synthetic_scores, split)
    for way in ("", VIA_INGEST):
        for measure in (0, 1):  # recall@5, recall@10
            legs = (
                table[f"fts{way}"]["overall"][measure],
                table[f"vector{way}"]["overall"][measure],
            )
            assert table[f"hybrid{way}"]["overall"][measure] >= max(legs) - 0.01, (way, measure)


@pytest.mark.parametrize("strategy", ["fts", "vector", "hybrid"])
@pytest.mark.slow
def test_through_ingest_every_turn_is_found_as_turn_by_turn(synthetic_scores, strategy):
    """``feral memory ingest`` of the conversations keeps each turn an episode citing it: each
    strategy finds the evidence about as well as when the turns are stored one by one (the
    episodes' entities, the turn id and the speaker, are the only difference)."""
    table = summarise(synthetic_scores)
    ingested, by_turn = table[f"{strategy}{VIA_INGEST}"]["overall"], table[strategy]["overall"]
    assert ingested[3] == by_turn[3]  # the same questions
    assert ingested[1] >= by_turn[1] - 0.05


@pytest.mark.slow
def test_the_vector_leg_is_the_plain_cosine_with_the_turn_before(synthetic_scores):
    """Turns are stored as episodes and embedded as written; feral's vector leg differs from a
    bare cosine over the same model only by the share each turn's cosine takes of the turn said
    before it (storage/search/neighbours.py), which finds replies the bare cosine misses."""
    table = summarise(synthetic_scores)
    vector, cosine = table["vector"]["overall"][:3], table["cosine"]["overall"][:3]
    assert all(v >= c - 1e-9 for v, c in zip(vector, cosine, strict=True)), (vector, cosine)
    assert vector != pytest.approx(cosine)  # the mix is on: the synthetic replies move


@pytest.mark.slow
def test_the_command_prints_every_method_per_split_and_refuses_a_missing_file(capsys, tmp_path):
    assert main(["locomo", "--json", "--split", "held"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report) == {"held"} and set(report["held"]) == set(METHODS)
    assert set(report["held"]["hybrid"]) == {*CATEGORIES.values(), "overall"}
    assert main(["locomo", "--json", "--split", "all", "--through", "both"]) == 0
    assert set(json.loads(capsys.readouterr().out)["all"]) == set(ALL_METHODS)
    assert main(["locomo", "--data", str(tmp_path / "missing.json")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "missing.json" in err[0]
