"""``feral sync status`` and ``feral sync peers``: what this node knows about its mesh.

Status is usually read by a CLI process beside a running ``feral serve``, so everything here
comes from the database, where the server's links record themselves: each link's row in
``peer_links`` while it is up (with the process that holds it, so a server killed outright
shows no link), what each peer last said it holds (vector, entry counts, log digests), the
stream it last announced, and the last error with its time. A link is "up now" only if its
process still runs; otherwise it was last up when its link ended or last recorded a sync.
Whether a peer is in sync, and what is known to be pending, is judged by node/links/sync_state.py.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from feral.node.clock_state import ClockState, clock_state
from feral.node.home.serve_runtime import process_alive
from feral.node.node_kernel import NodeKernel
from feral.node.settings.config import PeerSettings
from feral.storage.absorb import conflicts
from feral.storage.link import peers as peer_status
from feral.storage.link.peers import PeerStatus
from feral.storage.log import delta_log, integrity, row_digest
from feral.storage.memory import export
from feral.sync.hlc import unpack
from feral.sync.types import NodeId, VersionVector

from .answers_sync import CatchUp, ClockAnswer, LinkState, PeerRow, StatusAnswer
from .sync_state import PeerFacts, in_sync_window_ms, judge, to_receive

__all__ = ["peer_rows", "sync_status"]


def _lag_ms(ours: int, theirs: VersionVector) -> int | None:
    """How far the newest stamp the peer is known to hold trails ours, in wall-clock ms."""
    if not theirs:
        return None
    return max(0, unpack(ours)[0] - unpack(max(theirs.values()))[0])


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists (the link rows of a killed server stay behind)."""
    return pid == os.getpid() or process_alive(pid)


def _link_state(
    links: list[tuple[NodeId, int, int, int]], peer: NodeId, seen: PeerStatus, now: int
) -> LinkState:
    """``link_up``, ``link_up_since`` and ``last_seen_at`` (now, while a link is up)."""
    mine = [(pid, up, at) for p, pid, up, at in links if p == peer]
    up = [since for pid, since, _ in mine if _running(pid)]
    ended = [at for pid, _, at in mine if not _running(pid)]
    ended += [t for t in (seen["link_down_at"], seen["last_sync_at"]) if t is not None]
    return {
        "link_up": bool(up),
        "link_up_since": min(up) if up else None,
        "last_seen_at": now if up else max(ended, default=None),
    }


def _catch_up(seen: PeerStatus) -> CatchUp | None:
    total, received = seen["incoming_total"], seen["incoming_done"]
    if not total:
        return None
    return {"received": received, "total": total, "percent": received * 100 // total}


@dataclass(frozen=True)
class _Here:
    """What this node holds, against which each peer's record is judged."""

    vector: dict[NodeId, int]
    entries: dict[NodeId, int]
    digest: bytes
    alarms: dict[str, int]
    links: list[tuple[NodeId, int, int, int]]
    now: int
    window_ms: int
    """How young the last exchange must be for a peer to be in sync (node/links/sync_state.py)."""


def _equal(here: _Here, peer: NodeId, seen: PeerStatus) -> bool:
    """What the peer last said it holds is what this node holds now: equal vectors, and equal
    logs by digest at those vectors (a forged entry can make vectors and counts agree), and no
    colliding entry from the peer. Empty holdings are equal too: two empty devices that
    exchanged hold the same (nothing)."""
    return (
        seen["last_sync_at"] is not None
        and seen["vector"] == here.vector
        and seen["digest_vector"] == here.vector
        and seen["entries"] == here.entries
        and seen["digest"] == here.digest
        and not here.alarms.get(peer)
    )


def _facts(
    here: _Here, peer: NodeId, seen: PeerStatus, link: LinkState, diverged: bool
) -> PeerFacts:
    catch_up = _catch_up(seen)
    return PeerFacts(
        last_sync_at=seen["last_sync_at"],
        equal=_equal(here, peer, seen),
        diverged=diverged,
        link_up=link["link_up"],
        # A failure to reach it clears the recorded reachability; a session sets it again.
        unreachable=seen["last_error"] is not None and not seen["reachable"],
        announced_left=catch_up["total"] - catch_up["received"] if catch_up else 0,
    )


def _peer_row(here: _Here, peer: PeerSettings, seen: PeerStatus) -> PeerRow:
    compared = seen["digest_vector"]
    diverged = compared is not None and peer_status.diverged(
        here.vector, here.entries, here.digest, compared, seen["entries"], seen["digest"]
    )
    link = _link_state(here.links, peer.node_id, seen, here.now)
    facts = _facts(here, peer.node_id, seen, link, diverged)
    state = judge(facts, here.now, here.window_ms)
    return {
        "node_id": peer.node_id,
        "name": seen["name"],
        "url": peer.url,
        "reachable": link["link_up"],
        **link,
        "encrypted": seen["encrypted"],
        "certificate": seen["certificate"] if seen["encrypted"] else None,
        "last_sync_at": seen["last_sync_at"],
        "hlc_lag_ms": _lag_ms(max(here.vector.values(), default=0), seen["vector"]),
        "backlog": seen["backlog"],
        "backlog_to_send": seen["backlog"],
        "backlog_to_receive": to_receive(facts, here.now, here.window_ms),
        "catch_up": _catch_up(seen),
        "in_sync": state == "in_sync",
        "sync_state": state,
        "last_known_equal": facts.equal if facts.last_sync_at is not None else None,
        "diverged": diverged,
        "integrity_alarms": here.alarms.get(peer.node_id, 0),
        "clock_offset_ms": seen["clock_offset_ms"],
        "last_error": seen["last_error"],
        "last_error_at": seen["last_error_at"],
        "errors": seen["errors"],
        "rows_received": seen["rows_received"],
    }


async def peer_rows(node: NodeKernel) -> list[PeerRow]:
    """Each paired peer with what the links recorded about it."""
    store = node.store
    recorded = await store.read(peer_status.peer_statuses)
    here = _Here(
        await node.version_vector(), await store.read(delta_log.log_entry_counts),
        await store.read(row_digest.row_digest), await store.read(integrity.alarm_counts),
        await store.read(peer_status.link_rows), node.now_ms(), in_sync_window_ms(),
    )  # fmt: skip
    unmet = any(peer.node_id not in recorded for peer in node.settings.sync.peers)
    # A peer never met lacks the whole log: count it once for them all, and only if one is
    # unmet (a peer met before has its backlog counted from its vector by peer_statuses).
    whole_log = await store.read(peer_status.backlog_for, {}) if unmet else 0
    rows = []
    for peer in node.settings.sync.peers:
        seen = recorded.get(peer.node_id) or peer_status.never_met(peer.node_id, whole_log)
        rows.append(_peer_row(here, peer, seen))
    return rows


def _clock(state: ClockState) -> ClockAnswer:
    """This node's newest own stamp, how far it is ahead of the clock, and the warning if any."""
    return {"newest_own_hlc": state.newest, "ahead_ms": state.ahead_ms, "warning": state.warning}


async def sync_status(node: NodeKernel) -> StatusAnswer:
    """This node's clock and state digest, and each peer's row (DESIGN §6)."""
    return {
        "node_id": node.node_id,
        "name": node.settings.name,
        "hlc": await node.store.read(delta_log.clock_high_water),
        "state_digest": await node.store.read(export.state_digest),
        "vector": await node.version_vector(),
        "integrity_alarms": await node.store.read(integrity.alarm_summary),
        "conflicts": await node.store.read(conflicts.conflict_count),
        "max_clock_skew_ms": node.settings.sync.max_clock_skew_ms,
        "embed_pending": await node.embedding.pending(),
        "clock": _clock(await clock_state(node)),
        "now_ms": node.now_ms(),
        "in_sync_window_ms": in_sync_window_ms(),
        "peers": await peer_rows(node),
    }
