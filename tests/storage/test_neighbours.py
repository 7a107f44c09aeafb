"""storage/search/neighbours.py: the best hits lend a share of their score to the episodes written
just before and after them in the same session, so the reply that answers a question is found beside
the turn that matches it."""

from __future__ import annotations

import pytest

from feral.storage.memory.memories import add_episode
from feral.storage.search.neighbours import NEIGHBOUR_SHARE, sitting_cue, with_neighbours
from feral.storage.search.query import Hit, search_fts
from feral.storage.store import run_write

from .support import A, Replica


@pytest.fixture
def chat(make_replica) -> Replica:
    """A conversation of four turns, then a turn of another session written right after."""
    replica = make_replica("a", A)
    replica.episode("Ann: we celebrated my daughter's birthday with a concert")
    replica.episode("Bo: who played?")
    replica.episode("Ann: it was Matt Patterson, so talented")
    replica.episode("Bo: the weather is fine today")
    replica.time.advance()
    run_write(
        replica.conn,
        add_episode,
        replica.node_id,
        replica.clock.tick,
        "elsewhere",
        session_id="another session",
        summary="Cy: a concert of another session",
        entities=[],
        now_ms=replica.time(),
    )
    return replica


def _scored(hits: list[Hit]) -> list[Hit]:
    for hit in hits:
        hit.score = hit.fts_score
    return hits


def texts(hits: list[Hit]) -> list[str]:
    return [str(h.row["summary"]) for h in hits]


def test_the_turns_beside_a_hit_join_the_results_with_a_share_of_its_score(chat: Replica):
    found = _scored(search_fts(chat.conn, "daughter birthday", 10))
    assert texts(found) == ["Ann: we celebrated my daughter's birthday with a concert"]
    first = found[0].score
    widened = with_neighbours(chat.conn, found, 10)
    assert texts(widened) == [
        "Ann: we celebrated my daughter's birthday with a concert",
        "Bo: who played?",
    ]
    assert widened[1].score == pytest.approx(NEIGHBOUR_SHARE * first)
    assert widened[0].score == first  # a lender keeps its own score


def test_a_turn_between_two_hits_takes_the_larger_share_and_a_candidate_adds_it(chat: Replica):
    found = _scored(search_fts(chat.conn, "Matt Patterson concert", 10))
    before = {h.id: h.score for h in found}
    widened = {h.id: h for h in with_neighbours(chat.conn, found, 10)}
    played = next(i for i, h in widened.items() if h.row["summary"] == "Bo: who played?")
    assert played not in before  # it shares no word with the question: only its neighbours
    beside = [h for h in found if h.row["session_id"] != "another session"]
    assert len(beside) == 2  # the turns before and after it: it takes the larger share only
    assert widened[played].score == pytest.approx(NEIGHBOUR_SHARE * max(h.score for h in beside))


def test_rows_of_another_session_archived_rows_and_facts_lend_and_get_nothing(chat: Replica):
    found = _scored(search_fts(chat.conn, "weather", 10))
    assert texts(with_neighbours(chat.conn, found, 10)) == [
        "Bo: the weather is fine today",
        "Ann: it was Matt Patterson, so talented",  # the next row is another session's
    ]
    chat.conn.execute("UPDATE episodes SET archived = 1 WHERE summary LIKE '%Matt Patterson%'")
    assert texts(with_neighbours(chat.conn, found, 10)) == ["Bo: the weather is fine today"]
    chat.remember("Matt Patterson", "is", "a singer")
    facts = _scored(search_fts(chat.conn, "singer", 10))
    assert [h.row["table"] for h in with_neighbours(chat.conn, facts, 10)] == ["facts"]


def test_a_share_of_zero_or_a_limit_keeps_the_order_and_cuts_the_list(chat: Replica):
    found = _scored(search_fts(chat.conn, "concert", 10))
    assert [h.id for h in with_neighbours(chat.conn, found, 10, share=0.0)] == [
        h.id for h in sorted(found, key=lambda h: (-h.score, h.id))
    ]
    assert len(with_neighbours(chat.conn, found, 1)) == 1


def _turn(row_id: str, session: str, text: str, score: float) -> Hit:
    row = {"id": row_id, "table": "episodes", "session_id": session, "summary": text}
    return Hit(row, score=score)


def test_the_turns_of_a_sitting_where_two_of_the_best_hits_were_said_are_raised():
    """Issue 25: a question is answered where its topic was talked about. A sitting is a
    session's turns under one date stamp: two best hits in it raise its other candidates; a
    sitting with one hit, another session's turn of the same date, a turn without a stamp and
    a fact are left as they were."""
    hits = [
        _turn("talk-1", "chat", "[8 May] Ann: the concert was great", 0.50),
        _turn("talk-2", "chat", "[8 May] Bo: which band played the concert?", 0.45),
        _turn("once", "chat", "[9 May] Ann: a concert again", 0.44),
        _turn("answer", "chat", "[8 May] Ann: Matt Patterson, so talented", 0.40),
        _turn("other", "other chat", "[8 May] Cy: hello", 0.42),
        _turn("plain", "chat", "Ann: no stamp", 0.41),
        Hit(
            {
                "id": "fact",
                "table": "facts",
                "subject": "Ann",
                "predicate": "likes",
                "object": "concerts",
            },
            score=0.43,
        ),  # fmt: skip
    ]
    ranked = sitting_cue(hits, limit=5, cue=0.06, among=4)
    assert [h.id for h in ranked] == ["talk-1", "talk-2", "answer", "once", "fact"]
    assert {h.id: h.score for h in ranked}["answer"] == pytest.approx(0.40 + 0.06)
    assert {h.id: h.score for h in hits}["other"] == 0.42
    alone = sitting_cue([_turn("a", "chat", "[8 May] Ann: hi", 0.5)], limit=5)
    assert alone[0].score == 0.5
