"""The retrieval set: memories of one imagined household and the queries that should find them.

The data lives in ``benchmarks/retrieval/`` as JSON Lines, written by hand and kept in the
repository so every run measures the same thing:

* ``memories.jsonl``: ``{"id", "tier", "text"}``, a ``fact`` (stored as ``feral memory remember
  TEXT`` stores it) or an ``episode``. The memories come in dense clusters of look-alikes (many
  doctors, dentists and vets; many birthdays and anniversaries; many home-lab devices, cars,
  bikes, accounts, recipes and travel bookings), so a query that only finds the right topic is
  not enough.
* ``queries.jsonl``: ``{"id", "type", "query", "relevant"}``. A ``paraphrase`` says what one
  memory says with no content word in common (:func:`shared_content_words` checks this, and a
  test holds every paraphrase to it, so the set cannot silently get easier); a ``keyword`` query
  uses the memory's own distinctive words; a ``multi`` query has several relevant memories; a
  ``graph`` query names a relation path ("my son's school", "Bob's employer's city") that only
  the stored facts resolve, among look-alikes (other people's schools, dentists and employers).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = [
    "DATA",
    "QUERY_TYPES",
    "STOP_WORDS",
    "Memory",
    "Query",
    "content_words",
    "load_memories",
    "load_queries",
    "shared_content_words",
]

DATA = Path(__file__).parent / "retrieval"
QueryType = Literal["paraphrase", "keyword", "multi", "graph"]
QUERY_TYPES: tuple[QueryType, ...] = ("paraphrase", "keyword", "multi", "graph")

STOP_WORDS = frozenset(
    "a about above after again against all am an and any are aren as at be because been before "
    "being below between both but by can cannot could did didn do does doesn doing don down "
    "during each even ever every few for from further get got had has have having he her here "
    "hers herself him himself his how i if in into is isn it its itself just let ll me more most "
    "much my myself no nor not now of off on once one only or other ought our ours ourselves out "
    "over own re same she should so some such than that the their theirs them themselves then "
    "there these they this those through to too under until up upon us very was we were what "
    "when where whether which while who whom whose why will with won would yet you your yours "
    "yourself yourselves".split()
)
"""Function words: sharing one of these with a memory does not make a query lexical."""

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_SUFFIXES = ("ations", "ation", "ments", "ment", "ings", "ing", "ies", "ers", "er", "ed", "es",
             "s", "ly", "al", "y")  # fmt: skip
_MIN_STEM = 3
_MIN_PREFIX = 4


@dataclass(frozen=True)
class Memory:
    """One stored memory of the household."""

    id: str
    tier: Literal["fact", "episode"]
    text: str


@dataclass(frozen=True)
class Query:
    """One query and the memories that answer it."""

    id: str
    type: QueryType
    query: str
    relevant: tuple[str, ...]


def load_memories(path: Path = DATA / "memories.jsonl") -> list[Memory]:
    return [Memory(**json.loads(line)) for line in path.read_text("utf-8").splitlines() if line]


def load_queries(path: Path = DATA / "queries.jsonl") -> list[Query]:
    queries = []
    for line in path.read_text("utf-8").splitlines():
        if line:
            record = json.loads(line)
            queries.append(Query(**{**record, "relevant": tuple(record["relevant"])}))
    return queries


def _stem(word: str) -> str:
    """A deliberately crude stem: it over-strips, which only makes the paraphrase check stricter."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= _MIN_STEM:
            return word[: -len(suffix)]
    return word


def content_words(text: str) -> set[str]:
    """The stems of ``text``'s words that are not function words, numbers or single letters."""
    words = (w.casefold() for w in _WORD.findall(text))
    return {_stem(w) for w in words if len(w) > 1 and not w.isdigit() and w not in STOP_WORDS}


def _related(a: str, b: str) -> bool:
    """Same stem, or one begins with the other (``heart`` and ``heartbeat``)."""
    short, long = sorted((a, b), key=len)
    return short == long or (len(short) >= _MIN_PREFIX and long.startswith(short))


def shared_content_words(query: str, memory: str) -> list[tuple[str, str]]:
    """The pairs of related content words of ``query`` and ``memory``: empty for a paraphrase."""
    mine = content_words(memory)
    return sorted((q, m) for q in content_words(query) for m in mine if _related(q, m))
