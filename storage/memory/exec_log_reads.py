"""Reading the execution log: the newest tool calls, and a plain text scan over them.

The log has no full-text index (it is insert-only and written by tools, not people): a search
is a ``LIKE`` scan over each entry's tool name, arguments and result (their JSON text), case
blind for ASCII letters, newest first. Both orders are by replicated values (``created_at``,
then id), so two devices that have converged list the same entries in the same order.
"""

from __future__ import annotations

from typing import cast

from feral.storage.db.connection import Connection
from feral.storage.db.rows import ExecutionRow
from feral.sync.schema import EXEC_LOG

from .memories import row_dict, select_sql

__all__ = ["list_executions", "search_executions"]

_ORDER = "ORDER BY created_at DESC, id DESC LIMIT ?"


def list_executions(conn: Connection, *, session_id: str | None, limit: int) -> list[ExecutionRow]:
    """The newest entries first, of one session or of all."""
    where, params = "deleted = 0", []
    if session_id is not None:
        where += " AND session_id = ?"
        params.append(session_id)
    records = conn.execute(
        f"{select_sql(EXEC_LOG)} WHERE {where} {_ORDER}", (*params, limit)
    ).fetchall()
    return [cast(ExecutionRow, row_dict(EXEC_LOG, r)) for r in records]


def _like_pattern(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def search_executions(
    conn: Connection, query: str, *, session_id: str | None, limit: int
) -> list[ExecutionRow]:
    """Entries whose tool, arguments or result contain ``query``, newest first."""
    pattern = _like_pattern(query)
    where = (
        "deleted = 0 AND (tool LIKE ?1 ESCAPE '\\' OR args LIKE ?1 ESCAPE '\\' "
        "OR result LIKE ?1 ESCAPE '\\')"
    )
    params: list[object] = [pattern]
    if session_id is not None:
        where += " AND session_id = ?2"
        params.append(session_id)
    records = conn.execute(
        f"{select_sql(EXEC_LOG)} WHERE {where} ORDER BY created_at DESC, id DESC "
        f"LIMIT {int(limit)}",
        params,
    ).fetchall()
    return [cast(ExecutionRow, row_dict(EXEC_LOG, r)) for r in records]
