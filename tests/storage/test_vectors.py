"""storage/vectors/vectors.py: derived vector tables, the embed queue, and switching embedders."""

from __future__ import annotations

import math
import struct

import pytest

from feral.storage.db.connection import Connection
from feral.storage.db.errors import CorruptDatabase, EmbeddingError
from feral.storage.search.query import search_vector
from feral.storage.store import run_write
from feral.storage.vectors.vectors import (
    VECTOR_TABLES,
    embed_pending,
    embedder_in_use,
    ensure_vector_tables,
    pack_vector,
    reset_vectors,
    search_similar,
    unpack_vector,
)
from feral.sync.schema import EPISODES, FACTS
from tests.embedders import HashingEmbedder

from .support import A, Replica, pull


@pytest.fixture
def a(make_replica) -> Replica:
    return make_replica("a", A)


def embed_all(conn: Connection, embedder: HashingEmbedder) -> int:
    total = 0
    while done := run_write(conn, embed_pending, embedder):
        total += done
    return total


def vector_rowids(conn: Connection, table) -> set[int]:
    return {r[0] for r in conn.execute(f"SELECT rowid FROM {table.name}_vectors")}


def rowid_of(conn: Connection, table, row_id: str) -> int:
    return int(
        conn.execute(f"SELECT rowid FROM {table.name} WHERE id = ?", (row_id,)).fetchone()[0]
    )


def queued(conn: Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM embed_queue").fetchone()[0])


def query(embedder: HashingEmbedder, text: str) -> bytes:
    return pack_vector(embedder.embed([text])[0], embedder.dim)


# -- the embedder and packing --------------------------------------------------------------------


def test_the_hashing_embedder_is_deterministic_across_instances():
    texts = ["my doctor is Dr. Chen", "walk the dog", "my doctor is Dr. Chen"]
    first = HashingEmbedder(32).embed(texts)
    assert first == HashingEmbedder(32).embed(texts)
    assert first[0] == first[2] != first[1]


def test_the_hashing_embedder_makes_unit_vectors_of_its_dimension():
    embedder = HashingEmbedder(48)
    assert (embedder.name, embedder.dim) == ("hashing-48", 48)
    for vector in embedder.embed(["one", "two words", "Ünïcode wörds ok", "a a a a b"]):
        assert len(vector) == 48
        assert math.isclose(math.fsum(x * x for x in vector), 1.0, rel_tol=1e-9)


def test_the_hashing_embedder_ignores_case():
    embedder = HashingEmbedder(16)
    assert embedder.embed(["Walk The DOG"]) == embedder.embed(["walk the dog"])


def test_pack_vector_writes_little_endian_float32_of_exactly_dim_values():
    data = pack_vector([1.0, -0.5, 0.25], 3)
    assert len(data) == 12
    assert struct.unpack("<3f", data) == (1.0, -0.5, 0.25)


@pytest.mark.parametrize(
    "vector",
    [[math.nan, 0.0, 0.0], [math.inf, 0.0, 0.0], [0.0, -math.inf, 0.0]],
    ids=["NaN", "inf", "-inf"],
)
def test_pack_vector_rejects_values_that_are_not_finite(vector):
    with pytest.raises(EmbeddingError, match="NaN or infinity"):
        pack_vector(vector, 3)


@pytest.mark.parametrize("length", [0, 2, 4])
def test_pack_vector_rejects_the_wrong_dimension(length):
    with pytest.raises(EmbeddingError, match="expected 3"):
        pack_vector([0.5] * length, 3)


def test_a_stored_vector_that_is_not_float32_values_is_a_corrupt_database():
    with pytest.raises(CorruptDatabase, match="7 bytes is not float32 values"):
        unpack_vector(b"\x00" * 7)


# -- embedding the queue -------------------------------------------------------------------------


def test_without_an_embedder_writes_queue_nothing(a: Replica):
    a.remember("Dr. Chen", "is", "my doctor")
    a.episode("walked the dog", ["dog", "park"])
    assert queued(a.conn) == 0
    assert embedder_in_use(a.conn) is None


def test_the_first_embedder_queues_every_row_written_before_it(a: Replica):
    a.remember("Dr. Chen", "is", "my doctor")
    a.episode("walked the dog", ["dog", "park"])
    run_write(a.conn, ensure_vector_tables, HashingEmbedder(16))
    assert queued(a.conn) == 2


def test_embed_pending_fills_the_vector_tables_and_drains_the_queue(a: Replica):
    embedder = HashingEmbedder(16)
    run_write(a.conn, ensure_vector_tables, embedder)
    fact = a.remember("Dr. Chen", "is", "my doctor")
    episode = a.episode("walked the dog", ["dog", "park"])
    a.execution("calendar")  # the execution log has no vectors
    assert queued(a.conn) == 2
    assert embed_all(a.conn, embedder) == 2
    assert queued(a.conn) == 0
    assert vector_rowids(a.conn, FACTS) == {rowid_of(a.conn, FACTS, fact["id"])}
    assert vector_rowids(a.conn, EPISODES) == {rowid_of(a.conn, EPISODES, episode["id"])}
    assert embedder_in_use(a.conn) == ("hashing-16", 16)
    assert run_write(a.conn, embed_pending, embedder) == 0


def test_embed_pending_works_through_the_queue_in_batches(a: Replica):
    for i in range(7):
        a.remember(f"thing {i}", "is", "queued")
    embedder = HashingEmbedder(8)
    assert run_write(a.conn, embed_pending, embedder, 3) == 3
    assert queued(a.conn) == 4
    assert embed_all(a.conn, embedder) == 4
    assert len(vector_rowids(a.conn, FACTS)) == 7


def test_a_row_written_twice_before_embedding_is_queued_once(a: Replica):
    run_write(a.conn, ensure_vector_tables, HashingEmbedder(8))
    row = a.remember("sky", "is", "blue")
    a.archive(row["id"])
    a.restore(row["id"])
    assert queued(a.conn) == 1


def test_an_edited_row_is_embedded_again(a: Replica):
    row = a.remember("sky", "is", "blue")
    embedder = HashingEmbedder(16)
    embed_all(a.conn, embedder)
    a.archive(row["id"])
    assert queued(a.conn) == 1
    assert embed_all(a.conn, embedder) == 1
    assert len(vector_rowids(a.conn, FACTS)) == 1


def test_a_nuked_row_loses_its_vector(a: Replica):
    keep = a.remember("keep", "this", "one")
    drop = a.remember("drop", "this", "one")
    embedder = HashingEmbedder(16)
    embed_all(a.conn, embedder)
    a.nuke(drop["id"])
    embed_all(a.conn, embedder)
    assert vector_rowids(a.conn, FACTS) == {rowid_of(a.conn, FACTS, keep["id"])}


def test_an_archived_row_keeps_its_vector_but_is_never_found(a: Replica):
    row = a.remember("sky", "is", "blue")
    embedder = HashingEmbedder(16)
    embed_all(a.conn, embedder)
    a.archive(row["id"])
    embed_all(a.conn, embedder)
    assert len(vector_rowids(a.conn, FACTS)) == 1
    assert search_vector(a.conn, query(embedder, "sky is blue"), 5) == []


def test_rows_received_from_a_peer_are_embedded_locally(make_replica):
    a, b = make_replica("a", A), make_replica("b", "b" * 32)
    b.remember("remote", "fact", "arrives")
    b.episode("remote episode")
    embed_all(b.conn, HashingEmbedder(16))
    run_write(a.conn, ensure_vector_tables, HashingEmbedder(16))
    pull(a, b)
    assert queued(a.conn) == 2
    assert embed_all(a.conn, HashingEmbedder(16)) == 2


def test_switching_embedder_re_embeds_every_row_with_the_new_dimension(a: Replica):
    for i in range(5):
        a.remember(f"thing {i}", "is", "embedded")
    a.episode("an episode")
    embed_all(a.conn, HashingEmbedder(16))
    bigger = HashingEmbedder(24)
    assert embed_all(a.conn, bigger) == 6
    assert embedder_in_use(a.conn) == ("hashing-24", 24)
    for table in VECTOR_TABLES:
        lengths = {
            r[0] for r in a.conn.execute(f"SELECT length(embedding) / 4 FROM {table.name}_vectors")
        }
        assert lengths == {24}
    assert len(vector_rowids(a.conn, FACTS)) == 5
    assert len(vector_rowids(a.conn, EPISODES)) == 1
    hits = search_vector(a.conn, query(bigger, "thing 3 is embedded"), 1)
    assert hits[0].row["subject"] == "thing 3"


def test_the_same_embedder_again_keeps_the_vectors(a: Replica):
    a.remember("sky", "is", "blue")
    embedder = HashingEmbedder(16)
    embed_all(a.conn, embedder)
    assert embed_all(a.conn, HashingEmbedder(16)) == 0
    assert len(vector_rowids(a.conn, FACTS)) == 1


def test_reset_vectors_drops_every_vector_and_queues_every_row(a: Replica):
    for i in range(3):
        a.remember(f"thing {i}", "is", "embedded")
    a.episode("an episode")
    embedder = HashingEmbedder(16)
    embed_all(a.conn, embedder)
    assert run_write(a.conn, reset_vectors, embedder) == 4
    assert vector_rowids(a.conn, FACTS) == vector_rowids(a.conn, EPISODES) == set()
    assert embedder_in_use(a.conn) == ("hashing-16", 16)
    assert embed_all(a.conn, embedder) == 4
    assert len(vector_rowids(a.conn, FACTS)) == 3


def test_reset_vectors_can_change_the_dimension(a: Replica):
    a.remember("sky", "is", "blue")
    embed_all(a.conn, HashingEmbedder(16))
    assert run_write(a.conn, reset_vectors, HashingEmbedder(8)) == 1
    assert embed_all(a.conn, HashingEmbedder(8)) == 1
    assert embedder_in_use(a.conn) == ("hashing-8", 8)


# -- similarity search ---------------------------------------------------------------------------


def test_search_similar_finds_the_nearest_first(a: Replica):
    texts = ["my doctor is dr chen", "the dog likes the park", "tea with milk and sugar"]
    rows = [a.remember(*t.split(" ", 2)) for t in texts]
    embedder = HashingEmbedder(64)
    embed_all(a.conn, embedder)
    for text, row in zip(texts, rows, strict=True):
        nearest = search_similar(a.conn, FACTS, query(embedder, text), 3)
        assert nearest[0][0] == rowid_of(a.conn, FACTS, row["id"])
        assert math.isclose(nearest[0][1], 1.0, abs_tol=1e-5)
        similarities = [s for _, s in nearest]
        assert similarities == sorted(similarities, reverse=True)


def test_a_text_without_words_neither_breaks_nor_wins_a_vector_search(a: Replica):
    # A text with no words hashes to the zero vector, which has no direction. Before the fix,
    # search_similar crashed with TypeError on float(None).
    a.episode("👍", [])
    a.episode("walk the dog", ["dog"])
    embedder = HashingEmbedder(16)
    embed_all(a.conn, embedder)
    hits = search_vector(a.conn, query(embedder, "walk the dog"), 5)
    assert [h.row["summary"] for h in hits] == ["walk the dog"]
    assert search_vector(a.conn, query(embedder, "?!"), 5) == []
    assert search_similar(a.conn, EPISODES, query(embedder, "!!"), 5) == []
