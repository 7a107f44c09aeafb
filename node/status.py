"""``feral sync status`` and ``feral sync peers``: what this node knows about its mesh.

Status is usually read by a CLI process beside a running ``feral serve``, so everything here
comes from the database, where the server's links record themselves: each link's row in
``peer_links`` while it is up (with the process that holds it, so a server killed outright
shows no link), what each peer last said it holds (vector, entry counts, log digests), the
stream it last announced, and the last error with its time. A link is "up now" only if its
process still runs; otherwise it was last up when its link ended or last recorded a sync.
"""

from __future__ import annotations

import os
from typing import Any

from feral.storage import delta_log, export, integrity, log_digest, peers as peer_status
from feral.sync.hlc import unpack
from feral.sync.types import NodeId

from .node import Node

__all__ = ["peer_rows", "sync_status"]


def _lag_ms(ours: int, theirs: dict[str, int]) -> int | None:
    """How far the newest stamp the peer is known to hold trails ours, in wall-clock ms."""
    if not theirs:
        return None
    return max(0, unpack(ours)[0] - unpack(max(theirs.values()))[0])


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists (the link rows of a killed server stay behind)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _link_state(
    links: list[tuple[NodeId, int, int, int]], peer: NodeId, seen: dict[str, Any], now: int
) -> dict[str, Any]:
    """``link_up``, ``link_up_since`` and ``last_seen_at`` (now, while a link is up)."""
    mine = [(pid, up, at) for p, pid, up, at in links if p == peer]
    up = [since for pid, since, _ in mine if _running(pid)]
    ended = [at for pid, _, at in mine if not _running(pid)]
    ended += [t for t in (seen.get("link_down_at"), seen.get("last_sync_at")) if t is not None]
    return {
        "link_up": bool(up),
        "link_up_since": min(up) if up else None,
        "last_seen_at": now if up else max(ended, default=None),
    }


def _catch_up(seen: dict[str, Any]) -> dict[str, int] | None:
    total, received = seen.get("incoming_total", 0), seen.get("incoming_done", 0)
    if not total:
        return None
    return {"received": received, "total": total, "percent": received * 100 // total}


async def peer_rows(node: Node) -> list[dict[str, Any]]:
    """Each paired peer with what the links recorded about it."""
    recorded = await node.store.read(peer_status.peer_statuses)
    alarms = await node.store.read(integrity.alarm_counts)
    links = await node.store.read(peer_status.link_rows)
    vector = await node.version_vector()
    entries = await node.store.read(delta_log.log_entry_counts)
    digests = await node.store.read(log_digest.log_digests)
    high = max(vector.values(), default=0)
    unmet = any(peer.node_id not in recorded for peer in node.settings.sync.peers)
    # A peer never met lacks the whole log: count it once for them all, and only if one is
    # unmet (a peer met before has its backlog counted from its vector by peer_statuses).
    whole_log = await node.store.read(peer_status.backlog_for, {}) if unmet else 0
    now = node.now_ms()
    rows = []
    for peer in node.settings.sync.peers:
        seen = recorded.get(peer.node_id, {})
        theirs = seen.get("vector", {})
        compared = seen.get("digests_vector")
        diverged = (
            peer_status.diverged_origins(vector, entries, digests, compared,
                                         seen.get("entries", {}), seen.get("digests", {}))
            if compared is not None else []
        )  # fmt: skip
        link = _link_state(links, peer.node_id, seen, now)
        backlog = seen.get("backlog", whole_log)
        catch_up = _catch_up(seen)
        rows.append(
            {
                "node_id": peer.node_id,
                "name": seen.get("name", ""),
                "url": peer.url,
                "reachable": link["link_up"],
                **link,
                "encrypted": seen.get("encrypted", False),
                "last_sync_at": seen.get("last_sync_at"),
                "hlc_lag_ms": _lag_ms(high, theirs),
                "backlog": backlog,
                "backlog_to_send": backlog,
                "backlog_to_receive": catch_up["total"] - catch_up["received"] if catch_up else 0,
                "catch_up": catch_up,
                # In sync: equal vectors, and equal logs by digest at those vectors (a forged
                # entry can make vectors and counts agree); a colliding entry from the peer too.
                "in_sync": bool(theirs)
                and theirs == vector
                and compared == vector
                and seen.get("entries") == entries
                and seen.get("digests") == digests
                and not alarms.get(peer.node_id),
                "diverged": diverged,
                "integrity_alarms": alarms.get(peer.node_id, 0),
                "clock_offset_ms": seen.get("clock_offset_ms"),
                "last_error": seen.get("last_error"),
                "last_error_at": seen.get("last_error_at"),
                "errors": seen.get("errors", 0),
                "rows_received": seen.get("rows_received", 0),
            }
        )
    return rows


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
        "now_ms": node.now_ms(),
        "peers": await peer_rows(node),
    }
