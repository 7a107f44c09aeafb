"""The share of query words a lexical hit holds (storage/search/query.py), against an oracle.

The hybrid weighs each lexical hit by the share of the query's words its row holds, as the
full-text index matches them (by stem in the episodes' index, word for word in the facts').
The lexical leg counts them with one statement per word over all its hits; the oracle here asks
the index the plainest question there is, one word and one row at a time. Both must agree on any
query over rows full of what tokenizers treat unevenly: stems, accents, case, joined words,
apostrophes, digits and other scripts.

The vector leg reads the rows of only as many neighbours as can place; it must find what
reading every neighbour's row found, ties at the cut and archived rows included.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

from feral.storage.db.connection import Connection
from feral.storage.search.query import Hit, live_rows, query_terms, search_fts, search_vector
from feral.storage.store import run_write
from feral.storage.vectors.vectors import VECTOR_TABLES, embed_pending, pack_vector, search_similar
from tests.embedders import HashingEmbedder

from .support import A, Replica

WORDS = (
    "walk walked walking walks walker run running ran runs café cafe CAFÉ naïve naive "
    "foo_bar foo bar don't dont e-mail email 2024 Straße strasse İstanbul istanbul Σίσυφος "
    "東京 doctor doctors Doctor's appointment appointments the and of park parks parking "
    "connection connected connecting generously generous happy happiness"
).split()
ROWS = 160


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Replica]:
    """Episodes and facts whose text is drawn from :data:`WORDS` with a fixed seed."""
    directory: Path = tmp_path_factory.mktemp("coverage")
    replica = Replica.open(directory, "a", A, synchronous="NORMAL")
    rng = random.Random(25)

    def phrase(low: int, high: int) -> str:
        return " ".join(rng.choices(WORDS, k=rng.randint(low, high)))

    for _ in range(ROWS):
        replica.episode(phrase(2, 12), [phrase(1, 2) for _ in range(rng.randint(0, 2))])
        replica.remember(phrase(1, 3), phrase(1, 2), phrase(1, 4))
    yield replica
    replica.close()


@pytest.fixture(scope="module")
def vector_store(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Replica, HashingEmbedder, list[str]]]:
    """Embedded rows, a few of them repeated (equal vectors), and their ids."""
    replica = Replica.open(tmp_path_factory.mktemp("vectors"), "a", A, synchronous="NORMAL")
    rng = random.Random(26)
    row_ids = []
    for n in range(ROWS):
        if rng.random() < 0.3:  # a few texts said many times: equal scores
            row_ids.append(str(replica.episode(rng.choice(WORDS[:3]))["id"]))
        else:
            row_ids.append(str(replica.episode(" ".join(rng.choices(WORDS, k=9)))["id"]))
        if n % 8 == 0:  # few facts: they cannot make up for episodes left out
            fact = rng.choices(WORDS, k=3)
            row_ids.append(str(replica.remember(fact[0], fact[1], fact[2])["id"]))
    embedder = HashingEmbedder(64)
    while run_write(replica.conn, embed_pending, embedder):
        pass
    yield replica, embedder, row_ids
    replica.close()


def held_one_by_one(conn: Connection, hit: Hit, terms: list[str]) -> int:
    """How many ``terms`` the hit's row matches, one term and one row per statement."""
    table = f"{hit.row['table']}_fts"
    return sum(
        conn.execute(
            f"SELECT count(*) FROM {table} WHERE {table} MATCH ? AND rowid = ?",
            (term, hit.rowid),
        ).fetchone()[0]
        for term in terms
    )


queries = st.one_of(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join),
    st.text(alphabet=st.sampled_from("".join(WORDS) + " '\"-_*()"), max_size=40),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=queries)
def test_each_hits_share_of_query_words_is_what_the_index_matches_row_by_row(
    store: Replica, text: str
):
    terms = query_terms(text)
    hits = search_fts(store.conn, text, 50, coverage=True)
    event("hits" if hits else "no hit")
    for hit in hits:
        assert hit.coverage is not None
        assert hit.coverage * len(terms) == pytest.approx(
            held_one_by_one(store.conn, hit, terms)
        ), (text, hit.row)


def test_a_stem_an_accent_and_a_joined_word_count_as_the_index_matches_them(store: Replica):
    """Not every share is 0 or 1: the property above compares numbers that differ."""
    hits = search_fts(store.conn, "walking cafe foo_bar", 50, coverage=True)
    shares = {round(h.coverage or 0.0, 3) for h in hits}
    assert {0.333, 0.667, 1.0} <= shares


def every_neighbours_hits(conn: Connection, query_vector: bytes, limit: int) -> list[tuple]:
    """The vector leg as it was before it left rows unread: every neighbour's row read."""
    hits = []
    for table in VECTOR_TABLES:
        nearest = search_similar(conn, table, query_vector, limit * 2)
        rows = live_rows(conn, table, [rowid for rowid, _ in nearest])
        hits += [
            (-max(0.0, min(1.0, score)), str(rows[rowid]["id"]), rowid)
            for rowid, score in nearest
            if rowid in rows
        ]
    return sorted(hits)[:limit]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=queries, limit=st.integers(1, 30), hidden=st.floats(0.0, 0.8), seed=st.integers())
def test_the_vector_leg_finds_what_reading_every_neighbours_row_finds(
    vector_store: tuple[Replica, HashingEmbedder, list[str]],
    text: str,
    limit: int,
    hidden: float,
    seed: int,
):
    """Rows repeat (equal scores at the cut) and some are archived (fewer live than asked)."""
    replica, embedder, row_ids = vector_store
    rng = random.Random(seed)
    archived = {
        str(r[0])
        for t in VECTOR_TABLES
        for r in replica.conn.execute(f"SELECT id FROM {t.name} WHERE archived = 1")
    }
    for row_id in row_ids:
        if (rng.random() < hidden) != (row_id in archived):
            replica.archive(row_id, row_id not in archived)
    query_vector = pack_vector(embedder.embed([text])[0], embedder.dim)
    found = search_vector(replica.conn, query_vector, limit)
    expected = every_neighbours_hits(replica.conn, query_vector, limit)
    assert [(-h.vector_score, h.id, h.rowid) for h in found] == expected
    event(f"{len(found)} of {limit}")
