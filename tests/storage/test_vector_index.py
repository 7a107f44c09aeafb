"""storage/vectors/vector_index.py: the vectors held in memory answer as a plain cosine over the
stored BLOBs does, follow the node's own embedding writes without reloading, and reload after anyone
else's."""

from __future__ import annotations

import math

import pytest

from feral.storage.db.connection import Connection
from feral.storage.db.errors import CorruptDatabase
from feral.storage.search.query import search_vector
from feral.storage.store import run_write
from feral.storage.vectors.vector_index import VectorIndex, scan_table
from feral.storage.vectors.vectors import (
    Queued,
    embed_pending,
    queued_rows,
    reset_vectors,
    search_similar,
    store_vectors,
    unpack_vector,
)
from feral.sync.schema import EPISODES, FACTS, Table
from tests.embedders import HashingEmbedder

from .support import A, Replica

EMBEDDER = HashingEmbedder(32)
WORDS = "coffee tea chess piano garden boiler depot parcel tyres garage winter dog".split()


@pytest.fixture
def a(make_replica) -> Replica:
    replica = make_replica("a", A)
    for i, word in enumerate(WORDS):
        replica.remember("user", "likes", f"{word} {WORDS[(i * 5) % len(WORDS)]}")
        replica.episode(f"talked about {word} and {WORDS[(i * 7) % len(WORDS)]}")
    replica.episode("")  # no words: a zero vector, a match for nothing
    return replica


def drain(conn: Connection, index: VectorIndex | None = None) -> None:
    while run_write(conn, embed_pending, EMBEDDER, 7, index):
        pass


def query(text: str) -> bytes:
    from feral.storage.vectors.vectors import pack_vector

    return pack_vector(EMBEDDER.embed([text])[0], EMBEDDER.dim)


def agree(got: list[tuple[object, float]], expected: list[tuple[object, float]]) -> None:
    """The same scores in the same order, and the same rows above the last score (rows tied
    with it at the cut may differ: either is a right answer)."""
    assert [s for _, s in got] == pytest.approx([s for _, s in expected], abs=1e-5)
    if expected:
        cut = expected[-1][1] + 1e-5
        assert {r for r, s in got if s > cut} == {r for r, s in expected if s > cut}


def cosines(conn: Connection, table: Table, text: str, k: int) -> list[tuple[int, float]]:
    """The reference: every stored vector's cosine with the query's, in plain Python."""
    wanted = EMBEDDER.embed([text])[0]
    scored = []
    for rowid, blob in conn.execute(f"SELECT rowid, embedding FROM {table.name}_vectors"):
        vector = unpack_vector(blob)
        norms = math.hypot(*vector) * math.hypot(*wanted)
        if norms:
            scored.append(
                (int(rowid), sum(x * y for x, y in zip(vector, wanted, strict=True)) / norms)
            )
    return sorted(scored, key=lambda p: -p[1])[:k]


def same_answers(conn: Connection, index: VectorIndex) -> None:
    for word in WORDS:
        for table in (FACTS, EPISODES):
            expected = cosines(conn, table, word, 5)
            assert expected, word
            agree(index.nearest(conn, table, query(word), 5), expected)
            agree(search_similar(conn, table, query(word), 5), expected)
        plain = search_vector(conn, query(word), 5)
        held = search_vector(conn, query(word), 5, index)
        agree([(h.id, h.vector_score) for h in held], [(h.id, h.vector_score) for h in plain])


def test_the_index_answers_as_a_plain_cosine_does(a: Replica) -> None:
    drain(a.conn)
    index = VectorIndex()
    same_answers(a.conn, index)
    assert index.loads == 1
    assert index.nearest(a.conn, FACTS, query(""), 5) == []  # a zero query matches nothing


def test_the_nodes_own_embedding_keeps_the_index_current_without_a_reload(a: Replica) -> None:
    index = VectorIndex()
    drain(a.conn, index)
    same_answers(a.conn, index)
    loads = index.loads
    fact = a.remember("user", "likes", "garage tyres winter")
    a.archive(fact["id"])
    a.episode("the dog dug up the garden")
    drain(a.conn, index)
    same_answers(a.conn, index)
    assert index.loads == loads


def test_vectors_changed_by_anyone_else_make_the_index_reload(a: Replica) -> None:
    drain(a.conn)
    index = VectorIndex()
    same_answers(a.conn, index)
    a.episode("a parcel for the piano tuner")
    drain(a.conn)  # told nothing: another process, say
    same_answers(a.conn, index)
    assert index.loads == 2
    a.nuke(a.remember("user", "likes", "chess club")["id"])
    drain(a.conn)
    same_answers(a.conn, index)
    run_write(a.conn, reset_vectors, EMBEDDER)
    drain(a.conn, index)
    same_answers(a.conn, index)


def test_a_row_written_again_while_it_was_embedded_stays_queued(a: Replica) -> None:
    drain(a.conn)
    fact = a.remember("user", "likes", "garage")
    batch = [q for q in queued_rows(a.conn) if q.table == "facts"]
    a.archive(fact["id"])  # written again after its text was read, before it was stored
    changed = [Queued(q.table, q.rowid, q.text + " but stale" if q.text else None) for q in batch]
    vectors = EMBEDDER.embed([q.text or "" for q in changed])
    assert run_write(a.conn, store_vectors, EMBEDDER, changed, vectors) == 0
    assert [q.rowid for q in queued_rows(a.conn)] == [q.rowid for q in batch]


def test_a_stored_vector_of_the_wrong_size_is_reported_as_corruption(a: Replica) -> None:
    drain(a.conn)
    a.conn.execute("UPDATE facts_vectors SET embedding = x'00000000' WHERE rowid = 1")
    with pytest.raises(CorruptDatabase, match="not 32 float32 values"):
        scan_table(a.conn, FACTS, query("coffee"), 5)
    with pytest.raises(CorruptDatabase):
        VectorIndex().nearest(a.conn, FACTS, query("coffee"), 5)
