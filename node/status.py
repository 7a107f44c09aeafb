"""``feral sync status`` and ``feral sync peers``: what this node knows about its mesh."""

from __future__ import annotations

from typing import Any

from feral.storage import delta_log, export, integrity, peers as peer_status
from feral.sync.hlc import unpack

from .clock_state import ClockState, clock_state
from .node import Node

__all__ = ["peer_rows", "sync_status"]


def _lag_ms(ours: int, theirs: dict[str, int]) -> int | None:
    """How far the newest stamp the peer is known to hold trails ours, in wall-clock ms."""
    if not theirs:
        return None
    return max(0, unpack(ours)[0] - unpack(max(theirs.values()))[0])


async def peer_rows(node: Node) -> list[dict[str, Any]]:
    """Each paired peer with what the last links recorded about it."""
    recorded = await node.store.read(peer_status.peer_statuses)
    alarms = await node.store.read(integrity.alarm_counts)
    vector = await node.version_vector()
    high = max(vector.values(), default=0)
    unmet = any(peer.node_id not in recorded for peer in node.settings.sync.peers)
    # A peer never met lacks the whole log: count it once for them all, and only if one is
    # unmet (a peer met before has its backlog counted from its vector by peer_statuses).
    whole_log = await node.store.read(peer_status.backlog_for, {}) if unmet else 0
    rows = []
    for peer in node.settings.sync.peers:
        seen = recorded.get(peer.node_id, {})
        theirs = seen.get("vector", {})
        rows.append(
            {
                "node_id": peer.node_id,
                "name": seen.get("name", ""),
                "url": peer.url,
                "reachable": seen.get("reachable", False),
                "encrypted": seen.get("encrypted", False),
                "last_sync_at": seen.get("last_sync_at"),
                "hlc_lag_ms": _lag_ms(high, theirs),
                "backlog": seen.get("backlog", whole_log),
                # Equal vectors with a colliding entry from this peer are not equal state.
                "in_sync": bool(theirs) and theirs == vector and not alarms.get(peer.node_id),
                "integrity_alarms": alarms.get(peer.node_id, 0),
                "clock_offset_ms": seen.get("clock_offset_ms"),
                "last_error": seen.get("last_error"),
                "errors": seen.get("errors", 0),
                "rows_received": seen.get("rows_received", 0),
            }
        )
    return rows


def _clock(state: ClockState) -> dict[str, Any]:
    """This node's newest own stamp, how far it is ahead of the clock, and the warning if any."""
    return {"newest_own_hlc": state.newest, "ahead_ms": state.ahead_ms, "warning": state.warning}


async def sync_status(node: Node) -> dict[str, Any]:
    """This node's clock and state digest, and each peer's row (DESIGN §6)."""
    return {
        "node_id": node.node_id,
        "name": node.settings.name,
        "hlc": await node.store.read(delta_log.clock_high_water),
        "state_digest": await node.store.read(export.state_digest),
        "vector": await node.version_vector(),
        "integrity_alarms": await node.store.read(integrity.alarm_summary),
        "max_clock_skew_ms": node.settings.sync.max_clock_skew_ms,
        "embed_pending": await node.embedding.pending(),
        "clock": _clock(await clock_state(node)),
        "peers": await peer_rows(node),
    }
