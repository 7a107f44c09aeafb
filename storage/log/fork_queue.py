"""Rows a received page may have forked, queued in the page's transaction (sync/conflicts.py).

Finding and recording a conflict is a local write (it is stamped by this node's clock), which the
page's transaction cannot make: only the node stamps. So the page's transaction queues each row
where the log now holds another write that replaced the same version, and the node drains the queue
in a write of its own right after (storage/absorb/conflicts.py ``record_queued``). The queue is
local and travels nowhere; a crash between the two leaves the rows queued for the next drain.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from feral.storage.db.connection import Connection
from feral.sync.conflicts import REPORTED_TABLES
from feral.sync.delta import UNKNOWN_PRIOR, Delta
from feral.sync.schema import CONFLICTS, table_by_name
from feral.sync.types import NodeId

__all__ = ["has_queued", "queue_forked_rows", "queued_rows"]

_QUEUE = """
INSERT OR IGNORE INTO conflict_queue(tbl, row_id)
SELECT DISTINCT json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]')
FROM json_each(?1) AS j
WHERE EXISTS (
  SELECT 1 FROM delta_log AS e
  WHERE e.tbl = json_extract(j.value, '$[0]') AND e.row_id = json_extract(j.value, '$[1]')
    AND e.prior_hlc IS json_extract(j.value, '$[3]')
    AND e.prior_origin IS json_extract(j.value, '$[4]')
    AND e.payload IS NOT NULL
    AND NOT (e.origin = ?2 AND e.hlc = json_extract(j.value, '$[2]')))
"""


def queue_forked_rows(conn: Connection, origin: NodeId, deltas: Sequence[Delta]) -> None:
    """Queue the rows where one of ``deltas`` (one origin's, just logged) has a sibling in the
    log: another write with a payload that replaced the same version. One statement a batch.

    Also queued, for the drain to delete their records: a reported row's tombstone (a nuke),
    and the row a received conflict record names (it may be a row nuked here already).
    """
    candidates = [
        [table_by_name(d.table).code, d.row_id, d.hlc, *_prior(d)]
        for d in deltas
        if d.table in REPORTED_TABLES and d.values is not None and d.prior != UNKNOWN_PRIOR
    ]
    if candidates:
        conn.execute(_QUEUE, (json.dumps(candidates), origin))
    named: list[tuple[int, object]] = [
        (table_by_name(d.table).code, d.row_id)
        for d in deltas
        if d.table in REPORTED_TABLES and d.values is None
    ]
    named += [
        (table_by_name(d.values[1]).code, d.values[2])
        for d in deltas
        if d.table == CONFLICTS.name and d.values is not None and d.values[1] in REPORTED_TABLES
    ]
    if named:
        conn.executemany("INSERT OR IGNORE INTO conflict_queue(tbl, row_id) VALUES (?, ?)", named)


def _prior(delta: Delta) -> tuple[int | None, str | None]:
    return (None, None) if delta.prior is None else (delta.prior.hlc, delta.prior.origin)


def queued_rows(conn: Connection) -> list[tuple[int, str]]:
    """The queued rows, ``(table code, row id)``, in a stable order."""
    return [(int(t), str(r)) for t, r in conn.execute(
        "SELECT tbl, row_id FROM conflict_queue ORDER BY tbl, row_id")]  # fmt: skip


def has_queued(conn: Connection) -> bool:
    """Whether a drain has anything to look at (one read, so most pages cost no extra write)."""
    return conn.execute("SELECT 1 FROM conflict_queue LIMIT 1").fetchone() is not None
