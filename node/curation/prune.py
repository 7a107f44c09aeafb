"""Pruning this node's log and tombstones (storage/log/prune.py): ``feral sync prune``, the hourly
prune inside ``feral serve``, and the figures ``feral memory stats`` shows.

The paired peers are the ones in ``settings.json``; the window is ``sync.retention_days``.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from feral.node.answers import PeerHold, PruneDone, PruneFigures
from feral.node.kernel import Kernel
from feral.storage.log import prune
from feral.sync.errors import FeralError
from feral.sync.types import NodeId

__all__ = ["figures", "prune_figures", "prune_now", "prune_on_schedule"]

log = logging.getLogger("feral.serve")


def _arguments(node: Kernel) -> dict[str, Any]:
    sync = node.settings.sync
    return {
        "paired": [NodeId(peer.node_id) for peer in sync.peers],
        "now_ms": node.now_ms(),
        "window_ms": int(sync.retention_days * prune.DAY_MS),
    }


def _held(peer: prune.PeerHold) -> PeerHold:
    return {
        "node_id": peer.node_id,
        "name": peer.name,
        "last_sync_at": peer.last_sync_at,
        "holds": peer.holds,
        "lacking": peer.lacking,
    }


def figures(plan: prune.PrunePlan) -> PruneFigures:
    """A plan's figures as ``feral sync prune`` and ``feral memory stats`` show them."""
    oldest = plan.oldest_unacknowledged
    return {
        "log_entries": plan.log_entries,
        "prunable_entries": plan.entries,
        "prunable_tombstones": plan.tombstones,
        "retention_days": plan.window_ms / prune.DAY_MS,
        "peers": [_held(peer) for peer in plan.peers],
        "oldest_unacknowledged_peer": None if oldest is None else _held(oldest),
    }


async def prune_figures(node: Kernel) -> PruneFigures:
    """What a prune would collect now, and which peer holds it back longest (a read)."""
    arguments = _arguments(node)
    plan = await node.store.read(lambda conn: prune.plan_prune(conn, **arguments))
    return figures(plan)


async def prune_now(node: Kernel, *, dry_run: bool) -> PruneDone:
    """Collect what may go (or only say what, on a dry run); returns the plan's figures."""
    if dry_run:
        return {"dry_run": True, **await prune_figures(node)}
    arguments = _arguments(node)
    plan = await node.store.write(lambda conn: prune.apply_prune(conn, **arguments))
    return {"dry_run": False, **figures(plan)}


async def prune_on_schedule(node: Kernel) -> None:
    """``feral serve``'s prune, every ``sync.prune_every_s``; a failure is logged, not fatal."""
    while True:
        await asyncio.sleep(node.settings.sync.prune_every_s)
        try:
            done = await prune_now(node, dry_run=False)
        except FeralError as exc:
            log.warning("! prune failed: %s", exc)
            continue
        if done["prunable_entries"] or done["prunable_tombstones"]:
            log.info("pruned %s log entries and %s tombstones",
                     done["prunable_entries"], done["prunable_tombstones"])  # fmt: skip
