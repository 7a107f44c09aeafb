"""Naming the origins a peer holds back from this node, like the refusal did (PROTOCOL §8).

A peer holds back an origin's entries stamped beyond twice the window of this node's clock
(sync/held_back.py), so this node never sees them and cannot refuse them; it sees only the
peer's CaughtUp, which names the origin's newest stamp. That is enough to say which device's
clock is off, by how much, and through which peer, in the same words as the refusal.
"""

from __future__ import annotations

from feral.sync import held_back
from feral.sync.errors import ClockSkewError
from feral.sync.hlc import COUNTER_BITS
from feral.sync.text import printable
from feral.sync.types import NodeId, VersionVector

from .connection import Connection

__all__ = ["held_back_messages"]


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
        row = conn.execute("SELECT name FROM peer_status WHERE node_id = ?", (origin,)).fetchone()
        if row and row[0]:
            error = error.named(printable(str(row[0])))
        messages[origin] = f"{error}; held back by the peer until this clock is within reach"
    return messages
