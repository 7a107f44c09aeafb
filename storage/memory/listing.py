"""Listing memories with their meta, by tier, scope and status, and counting them by scope.

Statuses: ``active`` (live), ``archived`` (every archived row, superseded ones included),
``superseded`` (archived, and the target of a live ``supersedes`` edge: an older value that a
newer one replaced), ``all`` (everything not hard-deleted). The order is newest first by
``created_at``, then by id, descending: both are replicated values, so two devices that have
converged list the same memories in the same order.
"""

from __future__ import annotations

from typing import Any

from feral.storage.db.connection import Connection
from feral.sync.schema import EPISODES, FACTS, MEMORY_META, Table

from .memories import TIER_OF, Row, row_dict
from .memory_model import DEFAULT_SCOPE
from .stats import TierCounts

__all__ = ["LISTED_TIERS", "STATUSES", "list_memories", "scope_counts"]

STATUSES = ("active", "archived", "superseded", "all")
LISTED_TIERS: dict[str, Table] = {"episodic": EPISODES, "semantic": FACTS}
"""The tiers a listing shows (the execution log has no scope, status or importance)."""

_SCOPE = f"coalesce(nullif(m.scope, ''), '{DEFAULT_SCOPE}')"
_SUPERSEDED = (
    "EXISTS (SELECT 1 FROM edges e WHERE e.to_id = t.id AND e.type = 'supersedes' "
    "AND e.deleted = 0 AND e.archived = 0)"
)
_STATUS_WHERE = {
    "active": "t.archived = 0",
    "archived": "t.archived = 1",
    "superseded": f"t.archived = 1 AND {_SUPERSEDED}",
    "all": "1",
}
_META = tuple(c for c in MEMORY_META.column_names if c != "id")


def _select(table: Table) -> str:
    columns = ", ".join(f't."{n}"' for n in (*table.column_names, "hlc", "origin", "deleted"))
    meta = ", ".join(f'm."{n}"' for n in _META)
    return (
        f"SELECT {columns}, {meta}, {_SUPERSEDED} FROM {table.name} t "
        "LEFT JOIN memory_meta m ON m.id = t.id AND m.deleted = 0"
    )


def _listed(table: Table, record: tuple[Any, ...], created_default: int) -> Row:
    width = len(table.column_names) + 3
    row = row_dict(table, record[:width])
    row["table"] = table.name
    category, scope, importance, note, updated_at = record[width : width + len(_META)]
    row["meta"] = {
        "category": category or "note",
        "scope": scope or DEFAULT_SCOPE,
        "importance": 1.0 if importance is None else float(importance),
        "importance_note": note or "",
        "updated_at": int(row.get("created_at") or created_default)
        if updated_at is None
        else int(updated_at),
    }
    superseded = bool(record[width + len(_META)])
    row["status"] = "active" if not row["archived"] else "superseded" if superseded else "archived"
    return row


def list_memories(
    conn: Connection, *, tier: str | None, scope: str | None, status: str, limit: int
) -> list[Row]:
    """Memories newest first, each with its ``meta`` and ``status`` (the caller checked the
    tier, scope and status names)."""
    rows: list[Row] = []
    for table in [LISTED_TIERS[tier]] if tier else list(LISTED_TIERS.values()):
        where, params = ["t.deleted = 0", _STATUS_WHERE[status]], []
        if scope is not None:
            where.append(f"{_SCOPE} = ?")
            params.append(scope)
        records = conn.execute(
            f"{_select(table)} WHERE {' AND '.join(where)} "
            "ORDER BY t.created_at DESC, t.id DESC LIMIT ?",
            (*params, limit),
        ).fetchall()
        rows += [_listed(table, tuple(r), 0) for r in records]
    rows.sort(key=lambda r: (r["created_at"], r["id"]), reverse=True)
    return rows[:limit]


def scope_counts(conn: Connection, scope: str) -> dict[str, TierCounts]:
    """Live, archived and hard-deleted rows of one scope, per listed tier."""
    counts: dict[str, TierCounts] = {}
    for table in LISTED_TIERS.values():
        live, archived, deleted = conn.execute(
            "SELECT coalesce(sum(t.deleted = 0 AND t.archived = 0), 0), "
            "coalesce(sum(t.deleted = 0 AND t.archived = 1), 0), coalesce(sum(t.deleted), 0) "
            f"FROM {table.name} t LEFT JOIN memory_meta m ON m.id = t.id AND m.deleted = 0 "
            f"WHERE {_SCOPE} = ?",
            (scope,),
        ).fetchone()
        counts[TIER_OF[table.name]] = {"live": live, "archived": archived, "deleted": deleted}
    return counts
