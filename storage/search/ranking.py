"""Ranking by time, importance and use: ``final = relevance × temporal × importance × access``.

``relevance`` is what the search legs gave a hit (storage/search/query.py,
storage/search/fusion.py); ``temporal = max(0, 1 − decay × days since the memory was last
updated)``, except for facts in the ``identity`` category (a birthday does not go stale), which keep
1; ``importance`` is the replicated multiplier of the memory's meta row (``feral memory boost``), 1
without one. A memory without a meta row was last updated when it was created. ``access`` is this
device's own retrievals of the memory (storage/memory/access_strength.py: 1 to 1.2, local, never
replicated).

The meta rows are read here in one statement per search, inside the search's read, so every
hit is weighed against the same state. Nothing here writes: rankings are derived and local.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from feral.storage.db.connection import Connection
from feral.storage.memory.access_strength import Access as _Access, access_factor, read_access
from feral.storage.memory.memories import Row
from feral.storage.memory.memory_model import DEFAULT_SCOPE, Meta
from feral.sync.schema import MEMORY_META

from .query import Hit

__all__ = [
    "DAY_MS",
    "EXEMPT_CATEGORIES",
    "IMPORTANCE_CAP",
    "Weights",
    "hit_metas",
    "in_scope",
    "temporal_factor",
    "weigh",
]

DAY_MS = 86_400_000
IMPORTANCE_CAP = 10.0
"""The importance a ranking uses at most (and 0 at least): a meta row written by a peer is only
checked to be a finite number, so an importance outside ``boost``'s range (node/settings/limits.py's
``MAX_IMPORTANCE``, the same 10) cannot flood or invert a ranking here."""
EXEMPT_CATEGORIES = frozenset({"identity"})
"""Categories whose facts never decay: who someone is does not fade with time."""


@dataclass(frozen=True)
class Weights:
    """How a search weighs its hits: the decay per day, the clock, and the scope to keep."""

    decay_per_day: float
    now_ms: int
    scope: str | None = None
    """Only hits of this scope are kept (``None``: every scope)."""


def temporal_factor(meta: Meta, now_ms: int, decay_per_day: float) -> float:
    """``max(0, 1 − decay × days since last update)``; 1 for an exempt category or no decay.

    An update in the future (a clock that ran ahead on another device) counts as now.
    """
    if meta.category in EXEMPT_CATEGORIES or decay_per_day <= 0:
        return 1.0
    days = max(0, now_ms - meta.updated_at) / DAY_MS
    return max(0.0, 1.0 - decay_per_day * days)


def hit_metas(conn: Connection, hits: Sequence[Hit]) -> dict[str, Meta]:
    """The meta of every hit, by id (the defaults, updated at creation, for hits without one)."""
    ids = [h.id for h in hits]
    stored: dict[str, Meta] = {}
    if ids:
        columns = ", ".join(f'"{c}"' for c in MEMORY_META.column_names)
        records = conn.execute(
            f"SELECT {columns} FROM memory_meta "
            "WHERE id IN (SELECT value FROM json_each(?)) AND deleted = 0",
            (json.dumps(ids),),
        ).fetchall()
        for record in records:
            stored[str(record[0])] = Meta(*record)
    return {
        h.id: stored.get(h.id) or Meta(h.id, updated_at=int(h.row.get("created_at") or 0))
        for h in hits
    }


def in_scope(conn: Connection, rows: Sequence[Row], scope: str) -> list[Row]:
    """The rows (memories, each with an ``id``) of ``scope``, in their order; a row without a
    meta row is in the default scope."""
    scopes = dict(
        conn.execute(
            "SELECT id, scope FROM memory_meta WHERE id IN (SELECT value FROM json_each(?)) "
            "AND deleted = 0",
            (json.dumps([str(row["id"]) for row in rows]),),
        ).fetchall()
    )
    return [row for row in rows if (scopes.get(str(row["id"])) or DEFAULT_SCOPE) == scope]


def weigh(conn: Connection, hits: Sequence[Hit], weights: Weights) -> list[Hit]:
    """The hits of the wanted scope with ``score`` set to the final score, best first.

    Each kept hit's ``extra`` shows the parts: ``relevance`` (the legs' score), ``temporal``,
    ``importance``, ``access``, and the memory's ``scope`` and ``category``.
    """
    metas = hit_metas(conn, hits)
    accesses = read_access(conn, [h.id for h in hits])
    kept: list[Hit] = []
    for hit in hits:
        meta = metas[hit.id]
        if weights.scope is not None and (meta.scope or DEFAULT_SCOPE) != weights.scope:
            continue
        temporal = temporal_factor(meta, weights.now_ms, weights.decay_per_day)
        importance = min(max(meta.importance, 0.0), IMPORTANCE_CAP)
        access = access_factor(accesses.get(hit.id, _Access()), weights.now_ms)
        relevance = hit.score
        hit.score = relevance * temporal * importance * access
        hit.extra.update(
            relevance=round(relevance, 6),
            temporal=round(temporal, 6),
            importance=importance,
            access=round(access, 6),
            scope=meta.scope,
            category=meta.category,
        )
        kept.append(hit)
    return sorted(kept, key=lambda h: (-h.score, h.id))
