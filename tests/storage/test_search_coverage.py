"""The share of query words a lexical hit holds (storage/search/query.py), against an oracle.

The hybrid weighs each lexical hit by the share of the query's words its row holds, as the
full-text index matches them (by stem in the episodes' index, word for word in the facts').
The lexical leg counts them with one statement per word over all its hits; the oracle here asks
the index the plainest question there is, one word and one row at a time. Both must agree on any
query over rows full of what tokenizers treat unevenly: stems, accents, case, joined words,
apostrophes, digits and other scripts.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

from feral.storage.db.connection import Connection
from feral.storage.search.query import Hit, query_terms, search_fts

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
