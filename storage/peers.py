"""What this node knows about each peer: reachability, errors, and what the peer holds.

Local-only (never replicated): ``feral serve`` and ``feral sync now`` record here, and
``feral sync status`` reads it, so status works whether or not a server is running.
"""

from __future__ import annotations

import json
from typing import Any

from feral.sync.types import NodeId, VersionVector

from .connection import Connection
from .delta_log import version_vector

__all__ = [
    "backlog_for",
    "peer_statuses",
    "record_ack",
    "record_attempt",
    "record_error",
    "record_session",
    "record_sync",
    "record_transfer",
]


def _ensure(conn: Connection, peer: NodeId) -> None:
    conn.execute("INSERT INTO peer_status(node_id) VALUES (?) ON CONFLICT DO NOTHING", (peer,))


def record_attempt(conn: Connection, peer: NodeId, url: str | None, now_ms: int) -> None:
    """A connection to ``peer`` is being tried."""
    _ensure(conn, peer)
    conn.execute(
        "UPDATE peer_status SET url = coalesce(?, url), last_attempt_at = ? WHERE node_id = ?",
        (url, now_ms, peer),
    )


def record_session(
    conn: Connection,
    peer: NodeId,
    *,
    name: str,
    clock_offset_ms: int,
    encrypted: bool,
    now_ms: int,
) -> None:
    """``peer`` authenticated: it is reachable, and this is its clock and name."""
    _ensure(conn, peer)
    conn.execute(
        "UPDATE peer_status SET name = ?, reachable = 1, clock_offset_ms = ?, encrypted = ?, "
        "last_attempt_at = ? WHERE node_id = ?",
        (name, clock_offset_ms, int(encrypted), now_ms, peer),
    )


def record_transfer(conn: Connection, peer: NodeId, *, received: int = 0, sent: int = 0) -> None:
    """Count rows applied from, and acknowledged by, ``peer``."""
    _ensure(conn, peer)
    conn.execute(
        "UPDATE peer_status SET rows_received = rows_received + ?, rows_sent = rows_sent + ? "
        "WHERE node_id = ?",
        (received, sent, peer),
    )


def record_sync(conn: Connection, peer: NodeId, vector: VersionVector, now_ms: int) -> None:
    """``peer`` sent everything we lacked; ``vector`` is what it holds."""
    _ensure(conn, peer)
    conn.execute(
        "UPDATE peer_status SET vector = ?, last_sync_at = ?, reachable = 1 WHERE node_id = ?",
        (json.dumps(vector, sort_keys=True), now_ms, peer),
    )


def record_ack(conn: Connection, peer: NodeId, origin: NodeId, hlc: int) -> None:
    """``peer`` committed our page of ``origin`` up to ``hlc``: it holds at least that much.

    A peer's ``CaughtUp`` vector can predate the pages it goes on to receive in the same round
    (it had nothing to send before our pages arrived), so the acks keep the vector current.
    """
    _ensure(conn, peer)
    row = conn.execute("SELECT vector FROM peer_status WHERE node_id = ?", (peer,)).fetchone()
    vector = json.loads(row[0])
    if hlc > vector.get(origin, 0):
        vector[origin] = hlc
        conn.execute(
            "UPDATE peer_status SET vector = ? WHERE node_id = ?",
            (json.dumps(vector, sort_keys=True), peer),
        )


def record_error(
    conn: Connection, peer: NodeId, message: str, now_ms: int, *, unreachable: bool
) -> None:
    """A failure on the link with ``peer``: counted, and kept as its last error."""
    _ensure(conn, peer)
    conn.execute(
        "UPDATE peer_status SET last_error = ?, last_error_at = ?, errors = errors + 1, "
        "reachable = CASE WHEN ? THEN 0 ELSE reachable END WHERE node_id = ?",
        (message[:500], now_ms, int(unreachable), peer),
    )


def backlog_for(conn: Connection, theirs: VersionVector) -> int:
    """How many of this node's log entries a peer holding ``theirs`` still lacks."""
    total = 0
    for origin, mine in version_vector(conn).items():
        after = theirs.get(origin, 0)
        if mine > after:
            total += conn.execute(
                "SELECT count(*) FROM delta_log WHERE origin = ? AND hlc > ?", (origin, after)
            ).fetchone()[0]
    return int(total)


_COLUMNS = (
    "node_id", "name", "url", "reachable", "last_attempt_at", "last_sync_at", "last_error",
    "last_error_at", "errors", "clock_offset_ms", "vector", "encrypted", "rows_received",
    "rows_sent",
)  # fmt: skip


def peer_statuses(conn: Connection) -> dict[NodeId, dict[str, Any]]:
    """Everything recorded per peer, with the peer's vector decoded and its backlog counted."""
    result: dict[NodeId, dict[str, Any]] = {}
    for record in conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM peer_status"):
        row = dict(zip(_COLUMNS, record, strict=True))
        row["vector"] = json.loads(row["vector"])
        row["reachable"] = bool(row["reachable"])
        row["encrypted"] = bool(row["encrypted"])
        row["backlog"] = backlog_for(conn, row["vector"])
        result[NodeId(row["node_id"])] = row
    return result
