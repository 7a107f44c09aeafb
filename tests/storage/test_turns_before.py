"""The vector leg mixes a remembered turn's cosine with the turn said just before it in its
sitting (storage/search/neighbours.py's ``TURNS_BEFORE``, storage/vectors/vector_index.py), so a
reply that carries no content of its own is found for what it answered."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest

from feral.storage.db.connection import Connection
from feral.storage.search.neighbours import BEFORE_SHARE, TURNS_BEFORE, turns_before
from feral.storage.search.query import Hit, cosines_of, search_vector
from feral.storage.store import run_write
from feral.storage.vectors.vector_index import VectorIndex
from feral.storage.vectors.vectors import embed_pending, pack_vector, vector_generation
from tests.embedders import HashingEmbedder

from .support import A, Replica

EMBEDDER = HashingEmbedder(256)
QUESTION = "[1 May 2023] Bo: did you enjoy the pottery class last weekend?"
REPLY = "[1 May 2023] Ann: Yes, it was amazing!"
CONVERSATION = (
    "[30 April 2023] Ann: my pottery teacher says the glaze needs a week",  # another sitting
    "[30 April 2023] Bo: Yes, it was amazing!",  # the same words after another turn
    "[1 May 2023] Ann: the weather turned cold again",
    QUESTION,
    REPLY,
    "[1 May 2023] Bo: glad to hear it",
    "a note about the pottery class schedule",  # not a turn: it mixes with nothing
    "[2 May 2023] Ann: Yes, it was amazing!",  # the first turn of its sitting: nothing before
)


@pytest.fixture
def chat(make_replica) -> Replica:
    replica = make_replica("a", A)
    for text in CONVERSATION:
        replica.episode(text)
    drain(replica.conn)
    return replica


def drain(conn: Connection, index: VectorIndex | None = None) -> None:
    while run_write(conn, embed_pending, EMBEDDER, 16, index):
        pass


def query(text: str) -> bytes:
    return pack_vector(EMBEDDER.embed([text])[0], EMBEDDER.dim)


def texts(hits: list[Hit]) -> list[str]:
    return [str(h.row["summary"]) for h in hits]


def by_text(hits: list[Hit]) -> dict[str, float]:
    return {str(h.row["summary"]): h.vector_score for h in hits}


def test_a_reply_with_no_content_is_found_through_the_turn_it_answered(chat: Replica):
    asked = query("pottery class")
    own = by_text(search_vector(chat.conn, asked, 20))
    assert own[REPLY] == 0.0  # its words say nothing of pottery
    mixed = texts(search_vector(chat.conn, asked, 5, context=TURNS_BEFORE))
    assert REPLY in mixed
    assert mixed.index(QUESTION) < mixed.index(REPLY)  # the question itself stays above it
    # the same words said after another turn, or first in a sitting, stay below
    assert CONVERSATION[1] not in mixed and CONVERSATION[7] not in mixed


def test_the_mix_is_a_share_of_the_turn_before_and_only_within_one_sitting(chat: Replica):
    asked = query("pottery class")
    own = by_text(search_vector(chat.conn, asked, 20))
    every = search_vector(chat.conn, asked, 20, context=TURNS_BEFORE)
    mixed = by_text(every)
    agree = sum(x * y for x, y in zip(*EMBEDDER.embed([REPLY, QUESTION]), strict=True))
    share = BEFORE_SHARE
    length = math.sqrt((1 - share) ** 2 + share**2 + 2 * share * (1 - share) * agree)
    expected = ((1 - share) * own[REPLY] + share * own[QUESTION]) / length
    assert mixed[REPLY] == pytest.approx(max(0.0, expected), abs=1e-5)
    for unmixed in (CONVERSATION[0], CONVERSATION[2], CONVERSATION[6], CONVERSATION[7]):
        assert mixed[unmixed] == pytest.approx(own[unmixed], abs=1e-6)
    pairs = sorted(turns_before(chat.conn))
    assert len(pairs) == 4  # 2 after 1 (30 April), 4 after 3, 5 after 4 and 6 after 5 (1 May)


def test_the_held_vectors_the_fresh_read_and_the_cosines_agree(chat: Replica):
    index = VectorIndex()
    asked = query("pottery class")
    held = search_vector(chat.conn, asked, 20, index, TURNS_BEFORE)
    fresh = search_vector(chat.conn, asked, 20, context=TURNS_BEFORE)
    assert by_text(held) == pytest.approx(by_text(fresh), abs=1e-6)
    cosines = cosines_of(chat.conn, asked, held, index, TURNS_BEFORE)
    assert {h.id: h.vector_score for h in held} == pytest.approx(cosines, abs=1e-6)


def test_a_turn_said_after_the_index_was_loaded_mixes_with_the_one_before(chat: Replica):
    index = VectorIndex()
    asked = query("kiln firing")
    search_vector(chat.conn, asked, 20, index, TURNS_BEFORE)  # loaded, positions built
    chat.episode("[2 May 2023] Bo: how hot does the kiln firing get?")
    chat.episode("[2 May 2023] Ann: no idea honestly")
    drain(chat.conn, index)
    loads = index.loads
    found = texts(search_vector(chat.conn, asked, 2, index, TURNS_BEFORE))
    assert index.loads == loads  # kept current by the node's own writes, not read again
    assert found == [
        "[2 May 2023] Bo: how hot does the kiln firing get?",
        "[2 May 2023] Ann: no idea honestly",
    ]


class Recording:
    """The index's context, noting from which rowid it is asked for pairs each time."""

    share = BEFORE_SHARE

    def __init__(self) -> None:
        self.asked: list[int] = []

    def before(self, conn: Connection, since: int = 0) -> Iterator[tuple[int, int]]:
        self.asked.append(since)
        return turns_before(conn, since)


def rowid_of(conn: Connection, text: str) -> int:
    (rowid,) = conn.execute("SELECT rowid FROM episodes WHERE summary = ?", (text,)).fetchone()
    return int(rowid)


def test_a_turn_said_between_two_searches_reads_its_own_rows_not_the_table(chat: Replica):
    index, context, asked = VectorIndex(), Recording(), query("kiln firing")
    search_vector(chat.conn, asked, 20, index, context)
    chat.episode("[2 May 2023] Bo: how hot does the kiln firing get?")
    chat.episode("[2 May 2023] Ann: no idea honestly")
    drain(chat.conn, index)
    held = by_text(search_vector(chat.conn, asked, 20, index, context))
    first_new = rowid_of(chat.conn, "[2 May 2023] Bo: how hot does the kiln firing get?")
    assert context.asked == [0, first_new]
    search_vector(chat.conn, asked, 20, index, context)
    assert context.asked == [0, first_new]  # nothing changed: nothing read
    fresh = by_text(search_vector(chat.conn, asked, 20, VectorIndex(), TURNS_BEFORE))
    assert held == pytest.approx(fresh, abs=1e-6)


def test_a_rewritten_turn_reads_every_pair_again(chat: Replica):
    index, context, asked = VectorIndex(), Recording(), query("pottery class")
    search_vector(chat.conn, asked, 20, index, context)
    generation = vector_generation(chat.conn)
    rewritten = pack_vector(EMBEDDER.embed(["glazes and kilns"])[0], EMBEDDER.dim)
    index.changed(generation, generation, [("episodes", rowid_of(chat.conn, REPLY), rewritten)])
    loads = index.loads
    search_vector(chat.conn, asked, 20, index, context)
    assert index.loads == loads  # the copy was kept, not read again
    assert context.asked == [0, 0]  # its text may have changed: every pair is read again


def test_the_same_query_after_a_change_to_the_held_vectors_is_scored_afresh(chat: Replica):
    """One hybrid search asks the index for the same query's scores up to three times, and
    the index keeps the last query's: a change in between must not be answered from them."""
    index, asked = VectorIndex(), query("pottery class")
    held = by_text(search_vector(chat.conn, asked, 20, index, TURNS_BEFORE))
    assert by_text(search_vector(chat.conn, asked, 20, index, TURNS_BEFORE)) == held
    generation = vector_generation(chat.conn)
    pottery = pack_vector(EMBEDDER.embed(["pottery class"])[0], EMBEDDER.dim)
    index.changed(generation, generation, [("episodes", rowid_of(chat.conn, REPLY), pottery)])
    changed = by_text(search_vector(chat.conn, asked, 20, index, TURNS_BEFORE))
    assert changed[REPLY] > held[REPLY] + 0.1
