"""The stored facts sharing a new fact's words, at a cost that does not grow with the store.

The absorb pipeline compares a fact that has no vector yet (every line of a bulk import, and
rows still waiting in the embedding queue) by its words: a near-duplicate must share at least
:data:`WORD_SHARE` of their content words (Jaccard, node/absorb/classify.py). A full-text search of
all the words, ranked by BM25, scores every stored fact holding any common word of the line,
so its cost grew with the store (at 20,000 facts about 100 ms a line: an import of 20,000
lines took most of an hour). This asks instead for what a near-duplicate must hold:

- Jaccard ``J(A, B) ≥ s`` means ``B`` lacks at most ``m = ⌊(1 − s)·|A|⌋`` of ``A``'s content
  words, so of any ``m + k`` words of ``A``, ``B`` holds at least ``k``.
- Each word's rows are read up to :data:`COUNT_AT_MOST`: fewer, and the word is rare and its
  rows are all known. With more than ``m`` rare words, the rows holding at least ``r − m`` of
  the ``r`` rarest (at most ``m +`` :data:`WORDS_TOGETHER`) are every row a near-duplicate can
  be, counted in memory from those short lists; those holding the most of them come first.
- A line of (nearly) common words only asks FTS5 instead for :data:`WORDS_TOGETHER` of its
  ``m + k`` rarest words together (every choice, joined by OR; at most
  :data:`WORDS_ASKED_AT_MOST` words, so a very long line may miss a near-duplicate lacking
  several of those very words), newest first, and adds the rows of its rare words (those
  holding the most of them first). Only here is the read not exact: of many rows holding
  three of the line's common words together, the newest :data:`READ_AT_MOST` are read (an
  older near-duplicate that shares a rare word with the line is still among them).
- The rows found (at most :data:`READ_AT_MOST`, twice that in the case above) are ranked by word
  overlap with the line (then newest first); the best ``k`` are the candidates.

Each word is asked with and without a final ``s``, so "seats" finds "seat" and "seat" finds
"seats", as the word overlap counts them (exact terms: FTS5 reads a prefix's rows in full).
Every read returns at most those constants' rows, whatever the store holds; only FTS5's own
walk of common words' lists, in the second case, grows with it (in C, with skips).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from itertools import combinations

from feral.storage.db.connection import Connection
from feral.storage.memory.memories import Row, row_dict, select_sql
from feral.storage.search.query import STOP_WORDS
from feral.sync.schema import FACTS

__all__ = [
    "COUNT_AT_MOST",
    "IGNORED_WORDS",
    "READ_AT_MOST",
    "WORDS_ASKED_AT_MOST",
    "WORDS_TOGETHER",
    "WORD_SHARE",
    "content_words",
    "word_neighbours",
]

WORD_SHARE = 0.8
"""The word overlap a candidate without a vector needs (node/absorb/classify.py's
``QUEUED_OVERLAP``)."""
WORDS_TOGETHER = 3
"""How many of the rarest words a row must hold together to be read (fewer if the line has
fewer): three rare words together are rarely shared by chance."""
WORDS_ASKED_AT_MOST = 7
"""The rarest words a query names: ``C(7, 3) = 35`` groups at most."""
COUNT_AT_MOST = 64
"""How far a word's rows are counted to tell the rare from the common."""
READ_AT_MOST = 64
"""Matching rows read, newest first, before ranking by overlap."""

IGNORED_WORDS = STOP_WORDS | {"user", "note", "really", "very", "much", "lot"}
"""Words that carry no meaning of their own (and the subject and predicate of every note)."""

_WORD = re.compile(r"\w+")


def content_words(text: str) -> set[str]:
    """The words that carry meaning: case folded, stop words and filler left out, a trailing
    ``s`` dropped (so "seats" and "seat", "Sundays" and "Sunday" are one word)."""
    found = {w.removesuffix("s") for w in _WORD.findall(text.casefold()) if w not in IGNORED_WORDS}
    return found - {""}


def _overlap(left: set[str], right: set[str]) -> float:
    return len(left & right) / len(left | right) if left and right else 0.0


def _forms(word: str) -> str:
    """The word with and without a final ``s``, as FTS5 terms (both are one content word)."""
    return f'("{word}" OR "{word}s")'  # \w+ words hold no quote


def _rows_holding(conn: Connection, word: str, common: set[str]) -> list[int] | None:
    """The facts holding ``word`` (either form), all of them if fewer than
    :data:`COUNT_AT_MOST` (a rare word); ``None`` for a common word, which joins ``common``
    (rows are only added during a bulk write, so a common word stays common)."""
    if word in common:
        return None
    records = conn.execute(
        "SELECT rowid FROM facts_fts WHERE facts_fts MATCH ? LIMIT ?",
        (_forms(word), COUNT_AT_MOST),
    ).fetchall()
    if len(records) >= COUNT_AT_MOST:
        common.add(word)
        return None
    return [int(r[0]) for r in records]


def _candidate_rowids(conn: Connection, words: set[str], common: set[str]) -> list[int]:
    """The rows a near-duplicate of a text with content ``words`` must be among (module
    docstring), the likeliest first."""
    misses = int((1 - WORD_SHARE) * len(words) + 1e-9)
    holding = {word: _rows_holding(conn, word, common) for word in words}
    known = {word: rows for word, rows in holding.items() if rows is not None}
    common_rows = range(COUNT_AT_MOST)  # what a common word counts as
    rarest = sorted(words, key=lambda w: (len(known.get(w, common_rows)), -len(w), w))
    rare = [w for w in rarest if w in known][: misses + WORDS_TOGETHER]
    times = Counter(rowid for word in rare for rowid in set(known[word]))
    by_words_held = sorted(times, key=lambda rowid: (-times[rowid], -rowid))
    if len(rare) > misses:  # a near-duplicate holds all but ``misses`` of them: found here
        need = max(1, len(rare) - misses)
        return [rowid for rowid in by_words_held if times[rowid] >= need][:READ_AT_MOST]
    together = min(WORDS_TOGETHER, len(words))
    asked = rarest[: min(len(words), misses + together, WORDS_ASKED_AT_MOST)]
    groups = combinations(asked, min(together, len(asked)))
    match = " OR ".join("(" + " AND ".join(_forms(w) for w in group) + ")" for group in groups)
    records = conn.execute(
        "SELECT rowid FROM facts_fts WHERE facts_fts MATCH ? ORDER BY rowid DESC LIMIT ?",
        (match, READ_AT_MOST),
    ).fetchall()
    found = dict.fromkeys([*by_words_held[:READ_AT_MOST], *(int(r[0]) for r in records)])
    return list(found)


def word_neighbours(
    conn: Connection, text: str, own_id: str, k: int, common: set[str] | None = None
) -> list[Row]:
    """The ``k`` live facts (not ``own_id``) sharing most of ``text``'s content words, best
    first, among those a near-duplicate could be (module docstring); a bounded read.

    ``common``: the words already found common, kept by a bulk write across its lines so
    they are not counted again (a word's rows are only added to meanwhile)."""
    return [row for _, row in neighbour_rows(conn, text, own_id, k, common)]


def live_facts_by_rowid(conn: Connection, rowids: Sequence[int]) -> dict[int, Row]:
    """The live (neither deleted nor archived) facts among ``rowids``, by rowid."""
    if not rowids:
        return {}
    marks = ", ".join("?" * len(rowids))
    return {
        int(r[0]): row_dict(FACTS, r[1:])
        for r in conn.execute(
            f"{select_sql(FACTS).replace('SELECT ', 'SELECT rowid, ', 1)} "
            f"WHERE rowid IN ({marks}) AND deleted = 0 AND archived = 0",
            list(rowids),
        )
    }


def neighbour_rows(
    conn: Connection, text: str, own_id: str, k: int, common: set[str] | None = None
) -> list[tuple[int, Row]]:
    """:func:`word_neighbours` with each fact's rowid."""
    words = content_words(text)
    rowids = _candidate_rowids(conn, words, set() if common is None else common) if words else []
    if not rowids:
        return []
    records = conn.execute(
        "SELECT rowid, subject, predicate, object FROM facts WHERE rowid IN "
        f"({', '.join('?' * len(rowids))}) AND deleted = 0 AND archived = 0",
        rowids,
    ).fetchall()
    scored = [
        (_overlap(words, content_words(" ".join(str(part) for part in r[1:]).replace("_", " "))),
         int(r[0]))
        for r in records
    ]  # fmt: skip
    best = [rowid for _, rowid in sorted(scored, key=lambda s: (-s[0], -s[1]))[: k + 1]]
    found = live_facts_by_rowid(conn, best)
    return [(r, found[r]) for r in best if r in found and found[r]["id"] != own_id][:k]
