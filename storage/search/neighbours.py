"""The turns either side of a good hit: an episode's context in its conversation.

A conversation is remembered turn by turn, and the turn that answers a question is often the
one beside the turn that matches it best: "Who performed at the concert at Melanie's daughter's
birthday?" matches Melanie's "we celebrated my daughter's birthday with a concert" best, and its
answer is her next turn, "It was Matt Patterson", which shares no word and little meaning with
the question. So each of the best hybrid candidates lends its episode neighbours a share of its
score (:data:`NEIGHBOUR_SHARE`): a neighbour that was a candidate already adds it to its own
score, one that was not joins the candidates with it. A turn between two good hits takes the
larger share, not both: in a short conversation, shares added up let the turns around a name
said everywhere crowd out the answer.

Neighbours are the episodes of the same session one rowid before and after: rows are written
in the order the turns were said (``feral memory ingest`` and ``add_episode`` one by one), so
this needs no index and costs one statement per search. Facts have no neighbours.

The same neighbour, the turn said just before in the same sitting (:data:`TURNS_BEFORE`), lends
a turn :data:`BEFORE_SHARE` of its meaning in the vector leg: a reply such as "Yes, it was
amazing!" is about what was said before it. The vectors held in memory mix the two cosines at
query time (storage/vectors/vector_index.py); the stored vector stays the text's own.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from feral.storage.db.connection import Connection
from feral.storage.memory.memories import Row
from feral.sync.schema import EPISODES

from .query import Hit, live_rows
from .rerank import is_turn

__all__ = [
    "BEFORE_SHARE",
    "NEIGHBOUR_SHARE",
    "NEIGHBOUR_SOURCES",
    "SITTING_CUE",
    "SITTING_HITS",
    "TURNS_BEFORE",
    "TurnsBefore",
    "sitting_cue",
    "turns_before",
    "with_neighbours",
]

NEIGHBOUR_SHARE = 0.1
"""The share of a hit's score each of its two neighbours gets, chosen on LoCoMo's tuning half
(0.1 to 0.9 tried, lent by the best 1 to 10 hits): 0.15 and 0.2 did a little better there, but
cost one of the synthetic conversations' held questions its place in the first five, a short
conversation where one name is said in every turn (benchmarks/README.md)."""
NEIGHBOUR_SOURCES = 10
"""How many of the best candidates lend their neighbours a share."""
SITTING_CUE = 0.06
"""What each candidate turn of a sitting gains when two or more of the best
:data:`SITTING_HITS` hits were said in it (:func:`sitting_cue`; chosen on LoCoMo's tuning half
among 0.04 to 0.1, the best 5 to 20, two or three of them: benchmarks/README.md)."""
SITTING_HITS = 10
"""How many of the best hits :func:`sitting_cue` counts."""
BEFORE_SHARE = 0.3
"""The share of a turn's cosine taken from the turn said just before it in its sitting,
chosen on LoCoMo's tuning half (benchmarks/README.md)."""

_STAMP = re.compile(r"^\s*(\[[^\]]*\])")


def _sources(hits: Sequence[Hit], count: int) -> list[Hit]:
    """The best ``count`` hits that are live episodes read from this database."""
    best = sorted(hits, key=lambda h: (-h.score, h.id))[:count]
    return [h for h in best if h.row.get("table") == EPISODES.name and h.rowid is not None]


def with_neighbours(
    conn: Connection,
    hits: Sequence[Hit],
    limit: int,
    share: float = NEIGHBOUR_SHARE,
    sources: int = NEIGHBOUR_SOURCES,
) -> list[Hit]:
    """``hits`` with the session neighbours of the best ``sources`` of them raised (or added)
    by ``share`` of the best score among the hits beside them; the first ``limit``, best
    first."""
    lenders = _sources(hits, sources) if share > 0 else []
    if not lenders:
        return sorted(hits, key=lambda h: (-h.score, h.id))[:limit]
    wanted = {r for h in lenders if h.rowid is not None for r in (h.rowid - 1, h.rowid + 1)}
    rows = live_rows(conn, EPISODES, sorted(wanted))
    by_id = {h.id: h for h in hits}
    lent: dict[str, float] = {}
    for lender in lenders:
        assert lender.rowid is not None  # _sources keeps only hits read from the database
        for rowid in (lender.rowid - 1, lender.rowid + 1):
            row = rows.get(rowid)
            if row is None or row["session_id"] != lender.row["session_id"]:
                continue
            neighbour = by_id.setdefault(str(row["id"]), Hit(row, rowid=rowid))
            lent[neighbour.id] = max(lent.get(neighbour.id, 0.0), share * lender.score)
    for neighbour_id, raised in lent.items():
        by_id[neighbour_id].score += raised
        by_id[neighbour_id].parts["beside"] = raised / share
    return sorted(by_id.values(), key=lambda h: (-h.score, h.id))[:limit]


def _sitting(hit: Hit) -> tuple[str, str] | None:
    """The sitting a remembered turn was said in: its session and its leading ``[date]`` stamp
    (a whole conversation remembered turn by turn is one session, its sittings told apart by
    their dates); ``None`` for a fact or an episode without a stamp."""
    if hit.row.get("table") != EPISODES.name:
        return None
    stamp = _STAMP.match(str(hit.row.get("summary", "")))
    return (str(hit.row.get("session_id")), stamp.group(1)) if stamp else None


def turns_before(conn: Connection, since: int = 0) -> Iterator[tuple[int, int]]:
    """Every ``(rowid, rowid of the turn said just before it)`` from rowid ``since`` on: two
    remembered chat turns (:func:`~feral.storage.search.rerank.is_turn`) one rowid apart in one
    sitting, as :func:`with_neighbours` and :func:`sitting_cue` find them. Archived and deleted
    turns count: what was said before a reply is still what it answers."""
    found = conn.execute(
        f"SELECT rowid, session_id, summary FROM {EPISODES.name} WHERE rowid >= ? ORDER BY rowid",
        (since - 1,),
    )
    earlier: tuple[int, tuple[str, str] | None] = (-2, None)
    for rowid, session_id, summary in found:
        row: Row = {"table": EPISODES.name, "session_id": session_id, "summary": summary}
        hit = Hit(row)
        sitting = _sitting(hit) if is_turn(hit) else None
        if sitting is not None and earlier == (rowid - 1, sitting) and rowid >= since:
            yield rowid, rowid - 1
        earlier = (rowid, sitting)


@dataclass(frozen=True)
class TurnsBefore:
    """What the vector leg mixes into a turn's cosine
    (:class:`~feral.storage.vectors.vector_index.Context`)."""

    share: float = BEFORE_SHARE

    def before(self, conn: Connection, since: int = 0) -> Iterator[tuple[int, int]]:
        return turns_before(conn, since)


TURNS_BEFORE = TurnsBefore()
"""The mix every search's vector leg uses for episodes."""


def sitting_cue(
    hits: Sequence[Hit], limit: int, cue: float = SITTING_CUE, among: int = SITTING_HITS
) -> list[Hit]:
    """``hits`` with every turn of a sitting where two or more of the best ``among`` were said
    raised by ``cue``; the first ``limit``, best first. A question is answered where its topic
    was talked about: two good hits in one sitting say the talk was there, and the turns of it
    that share fewer words with the question come up beside them."""
    ranked = sorted(hits, key=lambda h: (-h.score, h.id))
    talked = Counter(_sitting(h) for h in ranked[:among])
    for hit in ranked:
        sitting = _sitting(hit)
        if sitting is not None and talked[sitting] >= 2:
            hit.score += cue
            hit.parts["sitting"] = 1.0
    return sorted(ranked, key=lambda h: (-h.score, h.id))[:limit]
