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
"""

from __future__ import annotations

from collections.abc import Sequence

from feral.storage.db.connection import Connection
from feral.sync.schema import EPISODES

from .query import Hit, live_rows

__all__ = ["NEIGHBOUR_SHARE", "NEIGHBOUR_SOURCES", "with_neighbours"]

NEIGHBOUR_SHARE = 0.1
"""The share of a hit's score each of its two neighbours gets, chosen on LoCoMo's tuning half
(0.1 to 0.9 tried, lent by the best 1 to 10 hits): 0.15 and 0.2 did a little better there, but
cost one of the synthetic conversations' held questions its place in the first five, a short
conversation where one name is said in every turn (benchmarks/README.md)."""
NEIGHBOUR_SOURCES = 10
"""How many of the best candidates lend their neighbours a share."""


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
    return sorted(by_id.values(), key=lambda h: (-h.score, h.id))[:limit]
