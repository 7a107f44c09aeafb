"""Writes of the absorb pipeline at the storage level, for the convergence machine: a fact that
supersedes another (the new row, its meta row, the old one archived, a ``supersedes`` edge, all
in one transaction, as ``remember`` makes them), typed links and meta rows (boosts)."""

from __future__ import annotations

from feral.storage.absorb.absorb_store import Decision, Outcome, absorb_fact, read_candidates
from feral.storage.db.connection import Connection
from feral.storage.memory.memories import Stamp
from feral.storage.memory.memory_model import Meta
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
    return absorb_fact(
        conn,
        origin,
        stamp,
        lambda c: read_candidates(c, new, [], "not_", " ".join(new), None),
        lambda _: Decision("supersede", supersedes=(old_id,)),
        lambda memory_id: Meta(memory_id, category=category, updated_at=now_ms),
        now_ms=now_ms,
    )
