"""The turns either side of a good hit: an episode's context in its conversation.

A conversation is remembered turn by turn, and the turn that answers a question is often the
one beside the turn that matches it best: "Who performed at the concert at Melanie's daughter's
birthday?" matches Melanie's "we celebrated my daughter's birthday with a concert" best, and its
answer is her next turn, "It was Matt Patterson", which shares no word and little meaning with
the question. So each of the best hybrid candidates lends its episode neighbours a share of its
score (:data:`NEIGHBOUR_SHARE`): a neighbour that was a candidate already adds it to its own
score, one that was not joins the candidates with it.

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

NEIGHBOUR_SHARE = 0.15
"""The share of a hit's score each of its two neighbours gets (chosen on LoCoMo's tuning half
among 0.1 to 0.9, lent by the best 1 to 10 hits; 0.2 did a little better there but took the
household paraphrases' MRR@10 to within 0.001 of the 0.01 it may lose: benchmarks/README.md)."""
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
    by ``share`` of each one's score; the first ``limit``, best first."""
    lenders = _sources(hits, sources) if share > 0 else []
    if not lenders:
        return sorted(hits, key=lambda h: (-h.score, h.id))[:limit]
    wanted = {r for h in lenders if h.rowid is not None for r in (h.rowid - 1, h.rowid + 1)}
    rows = live_rows(conn, EPISODES, sorted(wanted))
    by_id = {h.id: h for h in hits}
    lent = {h.id: share * h.score for h in lenders}  # before any lender is raised itself
    for lender in lenders:
        assert lender.rowid is not None  # _sources keeps only hits read from the database
        for rowid in (lender.rowid - 1, lender.rowid + 1):
            row = rows.get(rowid)
            if row is None or row["session_id"] != lender.row["session_id"]:
                continue
            neighbour = by_id.setdefault(str(row["id"]), Hit(row, rowid=rowid))
            neighbour.score += lent[lender.id]
    return sorted(by_id.values(), key=lambda h: (-h.score, h.id))[:limit]
