"""Naming the origins a peer holds back from this node, like the refusal did (REPLICATION §7).

A peer holds back an origin's entries stamped beyond twice the window of this node's clock
(sync/held_back.py), so this node never sees them and cannot refuse them; it sees only the
peer's CaughtUp, which names the origin's newest stamp. That is enough to say which device's
clock is off, by how much, and through which peer, in the same words as the refusal.
"""

from __future__ import annotations

from feral.storage.db.connection import Connection
from feral.sync import held_back
from feral.sync.errors import ClockSkewError
from feral.sync.events import DeltasRequested
from feral.sync.hlc import COUNTER_BITS
from feral.sync.session import SyncSession
from feral.sync.text import printable
from feral.sync.types import NodeId, VersionVector
from feral.sync.units import format_ms, short_id

__all__ = ["held_back_messages", "holding_back_messages"]


def held_back_messages(
    conn: Connection,
    theirs: VersionVector,
    ours: VersionVector,
    *,
    now_ms: int,
    window_ms: int,
    peer: NodeId | None,
) -> dict[NodeId, str]:
    """For each origin the peer holds entries of beyond our limit: what to tell the user."""
    limit = held_back.take_limit(now_ms, window_ms)
    messages = {}
    for origin, stamp in held_back.beyond(theirs, ours, limit).items():
        error = ClockSkewError((stamp >> COUNTER_BITS) - now_ms, window_ms, peer, origin)
        if name := _name(conn, origin):
            error = error.named(name)
        messages[origin] = f"{error}; held back by the peer until this clock is within reach"
    return messages


def holding_back_messages(
    conn: Connection,
    ours: VersionVector,
    request: DeltasRequested,
    session: SyncSession,
    peer: NodeId | None,
) -> dict[NodeId, str]:
    """For each origin this node holds back from ``peer`` (its entries above the request's
    ceiling): what to tell the user here, the device whose clock is ahead often being this one.
    Nothing before the handshake has measured the peer's clock."""
    messages: dict[NodeId, str] = {}
    offset, ceiling = session.peer_offset_ms, request.ceiling
    if ceiling is None or offset is None or peer is None:
        return messages
    peer_clock_ms = session.local.now_ms() + offset
    window = format_ms(session.local.max_skew_ms)
    for origin, stamp in held_back.beyond(ours, request.since, ceiling).items():
        writer = short_id(origin)
        if name := _name(conn, origin):
            writer = f"{name} ({writer})"
        ahead = format_ms((stamp >> COUNTER_BITS) - peer_clock_ms)
        messages[origin] = (
            f"clock skew: entries written by {writer} are stamped {ahead} ahead of "
            f"{short_id(peer)}'s clock, more than twice max_clock_skew_ms ({window}): held "
            f"back from it until its clock is within reach (the clock of {writer} is ahead, "
            "or was when it wrote them)"
        )
    return messages


def _name(conn: Connection, origin: NodeId) -> str:
    """The origin's name, if a link with it ever told us (``""`` otherwise)."""
    row = conn.execute("SELECT name FROM peer_status WHERE node_id = ?", (origin,)).fetchone()
    return printable(str(row[0])) if row and row[0] else ""
