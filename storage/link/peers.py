"""What this node knows about each peer: reachability, errors, and what the peer holds.

Local-only (never replicated): ``feral serve`` and ``feral sync now`` record here, and
``feral sync status`` reads it, so status works whether or not a server is running.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any, TypedDict

from feral.storage.db.connection import Connection
from feral.storage.log.delta_log import version_vector
from feral.sync.types import NodeId, VersionVector

__all__ = [
    "PeerStatus",
    "backlog_for",
    "diverged",
    "link_rows",
    "never_met",
    "peer_statuses",
    "record_ack",
    "record_attempt",
    "record_error",
    "record_incoming",
    "record_link_down",
    "record_link_up",
    "record_pending",
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
    certificate: str | None = None,
) -> None:
    """``peer`` authenticated: it is reachable, and this is its clock and name (and the
    fingerprint of the TLS certificate the link runs under, if encrypted)."""
    _ensure(conn, peer)
    conn.execute(
        "UPDATE peer_status SET name = ?, reachable = 1, clock_offset_ms = ?, encrypted = ?, "
        "certificate = ?, last_attempt_at = ? WHERE node_id = ?",
        (name, clock_offset_ms, int(encrypted), certificate, now_ms, peer),
    )


def record_transfer(conn: Connection, peer: NodeId, *, received: int = 0, sent: int = 0) -> None:
    """Count rows applied from, and acknowledged by, ``peer``."""
    _ensure(conn, peer)
    conn.execute(
        "UPDATE peer_status SET rows_received = rows_received + ?, rows_sent = rows_sent + ? "
        "WHERE node_id = ?",
        (received, sent, peer),
    )


def record_sync(
    conn: Connection,
    peer: NodeId,
    vector: VersionVector,
    now_ms: int,
    *,
    entries: dict[NodeId, int] | None = None,
    digest: bytes = b"",
) -> None:
    """``peer`` sent everything we lacked; ``vector`` is what it holds, with its log's entry
    counts and its row digest (kept with the vector it describes, compared at equal vectors).

    A completed exchange is the success that clears the last error (its count stays), and
    ends the stream it announced: nothing more is to be received from it.
    """
    _ensure(conn, peer)
    conn.execute(
        "UPDATE peer_status SET vector = ?1, last_sync_at = ?2, reachable = 1, entries = ?3, "
        "digest = ?4, digest_vector = ?1, last_error = NULL, last_error_at = NULL, "
        "incoming_done = incoming_total WHERE node_id = ?5",
        (
            json.dumps(vector, sort_keys=True), now_ms, json.dumps(entries or {}, sort_keys=True),
            digest.hex() or None, peer,
        ),
    )  # fmt: skip
    conn.execute(
        "UPDATE peer_links SET seen_at = ? WHERE peer = ? AND pid = ?", (now_ms, peer, os.getpid())
    )


def record_pending(conn: Connection, peer: NodeId, entries: int) -> None:
    """``peer`` announced a stream of ``entries`` entries we lack: a new catch-up begins (an
    announcement of none leaves the last catch-up's figures as they were)."""
    _ensure(conn, peer)
    if entries:
        conn.execute(
            "UPDATE peer_status SET incoming_total = ?, incoming_done = 0 WHERE node_id = ?",
            (entries, peer),
        )


def record_incoming(conn: Connection, peer: NodeId, entries: int) -> tuple[int, int]:
    """A page of ``entries`` entries from ``peer`` was applied; returns the catch-up's
    ``(received, total)`` (both 0 when no stream was announced)."""
    _ensure(conn, peer)
    row = conn.execute(
        "UPDATE peer_status SET incoming_done = min(incoming_total, incoming_done + ?) "
        "WHERE node_id = ? RETURNING incoming_done, incoming_total",
        (entries, peer),
    ).fetchone()
    return int(row[0]), int(row[1])


def record_link_up(conn: Connection, link_id: str, peer: NodeId, now_ms: int) -> None:
    """A link with ``peer`` is up in this process (another process reads it: ``sync status``)."""
    _ensure(conn, peer)
    conn.execute(
        "INSERT OR REPLACE INTO peer_links(link_id, peer, pid, up_at, seen_at) "
        "VALUES (?, ?, ?, ?, ?)",
        (link_id, peer, os.getpid(), now_ms, now_ms),
    )


def record_link_down(conn: Connection, link_id: str, peer: NodeId, now_ms: int) -> None:
    """The link ``link_id`` with ``peer`` ended: it was last up now."""
    conn.execute("DELETE FROM peer_links WHERE link_id = ?", (link_id,))
    conn.execute(
        "UPDATE peer_status SET link_down_at = ? WHERE node_id = ?",
        (now_ms, peer),
    )


def link_rows(conn: Connection) -> list[tuple[NodeId, int, int, int]]:
    """Every link recorded as up: ``(peer, pid, up_at, seen_at)``; the caller checks the
    process still runs (one killed outright never recorded its end)."""
    rows = conn.execute("SELECT peer, pid, up_at, seen_at FROM peer_links ORDER BY up_at")
    return [(NodeId(p), int(pid), int(up), int(seen)) for p, pid, up, seen in rows]


def diverged(
    vector: VersionVector,
    entries: dict[NodeId, int],
    digest: bytes,
    theirs: VersionVector,
    their_entries: dict[NodeId, int],
    their_digest: bytes,
) -> bool:
    """Whether the peer holds other rows although both sides hold the same entries by stamp.

    Judged only when the whole vectors and all counts are equal and both digests are known:
    then honest nodes hold the same rows (the last-write-wins winners of the same entries).
    """
    if vector != theirs or entries != their_entries or not digest or not their_digest:
        return False
    return digest != their_digest


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
    "rows_sent", "entries", "digest", "digest_vector", "incoming_total", "incoming_done",
    "link_down_at", "certificate",
)  # fmt: skip


class PeerStatus(TypedDict):
    """What this node recorded of one peer (its ``peer_status`` row, decoded) and what the peer
    still lacks of this node's log; :func:`never_met` is the record of a peer not met yet."""

    node_id: NodeId
    name: str
    url: str | None
    reachable: bool
    last_attempt_at: int | None
    last_sync_at: int | None
    last_error: str | None
    last_error_at: int | None
    errors: int
    clock_offset_ms: int | None
    vector: VersionVector
    """What the peer last said it holds."""
    encrypted: bool
    rows_received: int
    rows_sent: int
    entries: dict[NodeId, int]
    """The peer's log entries per origin, at ``digest_vector``."""
    digest: bytes
    """The peer's row digest at ``digest_vector`` (empty: none recorded)."""
    digest_vector: VersionVector | None
    incoming_total: int
    incoming_done: int
    link_down_at: int | None
    certificate: str | None
    backlog: int
    """How many of this node's log entries the peer lacks (:func:`backlog_for`)."""


def _peer_status(conn: Connection, record: Sequence[Any]) -> PeerStatus:
    row = dict(zip(_COLUMNS, record, strict=True))
    vector: VersionVector = json.loads(row["vector"])
    compared = row["digest_vector"]
    return {
        "node_id": NodeId(row["node_id"]),
        "name": row["name"],
        "url": row["url"],
        "reachable": bool(row["reachable"]),
        "last_attempt_at": row["last_attempt_at"],
        "last_sync_at": row["last_sync_at"],
        "last_error": row["last_error"],
        "last_error_at": row["last_error_at"],
        "errors": row["errors"],
        "clock_offset_ms": row["clock_offset_ms"],
        "vector": vector,
        "encrypted": bool(row["encrypted"]),
        "rows_received": row["rows_received"],
        "rows_sent": row["rows_sent"],
        "entries": json.loads(row["entries"]),
        "digest": b"" if row["digest"] is None else bytes.fromhex(row["digest"]),
        "digest_vector": None if compared is None else json.loads(compared),
        "incoming_total": row["incoming_total"],
        "incoming_done": row["incoming_done"],
        "link_down_at": row["link_down_at"],
        "certificate": row["certificate"],
        "backlog": backlog_for(conn, vector),
    }


def peer_statuses(conn: Connection) -> dict[NodeId, PeerStatus]:
    """Everything recorded per peer, with the peer's vector decoded and its backlog counted."""
    result: dict[NodeId, PeerStatus] = {}
    for record in conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM peer_status"):
        status = _peer_status(conn, record)
        result[status["node_id"]] = status
    return result


def never_met(node_id: NodeId, backlog: int) -> PeerStatus:
    """The record of a paired peer this node never met: the ``peer_status`` table's defaults
    (nothing held, never synced, no error), lacking ``backlog`` entries (the whole log)."""
    return {
        "node_id": node_id, "name": "", "url": None, "reachable": False,
        "last_attempt_at": None, "last_sync_at": None, "last_error": None, "last_error_at": None,
        "errors": 0, "clock_offset_ms": None, "vector": {}, "encrypted": False,
        "rows_received": 0, "rows_sent": 0, "entries": {}, "digest": b"", "digest_vector": None,
        "incoming_total": 0, "incoming_done": 0, "link_down_at": None, "certificate": None,
        "backlog": backlog,
    }  # fmt: skip
