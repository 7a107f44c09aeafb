"""Writes of the absorb pipeline at the storage level, for the convergence machine: a fact that
supersedes another (the new row, its meta row, the old one archived, a ``supersedes`` edge, all
in one transaction, as ``remember`` makes them), typed links and meta rows (boosts)."""

from __future__ import annotations

from feral.storage.absorb.absorb_store import Decision, Outcome, read_candidates, write_outcome
from feral.storage.db.connection import Connection
from feral.storage.memory.memories import Stamp
from feral.sync.types import NodeId

__all__ = ["supersede"]

Triple = tuple[str, str, str]


def supersede(
    conn: Connection,
    origin: NodeId,
    stamp: Stamp,
    new: Triple,
    old_id: str,
    *,
    category: str,
    now_ms: int,
) -> Outcome:
    """Absorb ``new`` as superseding the fact ``old_id`` (NotFoundError if that one is gone:
    the transaction rolls back and nothing is written)."""
    found = read_candidates(conn, new, [], "not_", " ".join(new), None)
    decision = Decision("supersede", supersedes=(old_id,))
    return write_outcome(
        conn, origin, stamp, found.triple, decision, category=category, now_ms=now_ms
    )
