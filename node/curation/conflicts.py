"""Conflicts on a running node: record what a peer's page forked, list, count and resolve.

A page from a peer is applied in the link's transaction, which cannot stamp; it queues the rows
it may have forked (storage/log/fork_queue.py), and :func:`record_conflicts` runs right after, as a
local write, so the records replicate like any other write (docs/REPLICATION.md §4). The CLI
(cli/memory/conflict_commands.py) and the API (node/api/conflict_routes.py) read and resolve through
these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from feral.storage.absorb import conflicts
from feral.storage.absorb.conflicts import ConflictRow
from feral.storage.log.fork_queue import has_queued

if TYPE_CHECKING:
    from feral.node.kernel import Kernel

__all__ = ["conflict_count", "list_conflicts", "record_conflicts", "resolve"]


async def record_conflicts(node: Kernel) -> int:
    """Record the conflicts of the rows a peer's page queued; returns how many are new."""
    if not await node.store.read(has_queued):
        return 0
    return await node.commit(conflicts.record_queued)


async def list_conflicts(node: Kernel, *, include_resolved: bool = False) -> list[ConflictRow]:
    """The records, open ones only unless ``include_resolved``; the same list on every device."""
    return await node.store.read(conflicts.list_conflicts, include_resolved=include_resolved)


async def conflict_count(node: Kernel) -> int:
    return await node.store.read(conflicts.conflict_count)


async def resolve(node: Kernel, conflict: str, keep: str) -> ConflictRow:
    """Keep version ``keep`` of an open conflict: a write that supersedes both sides.

    Raises:
        NotFoundError: no open conflict ``conflict``, or ``keep`` is not one of its versions.
    """
    return await node.commit(conflicts.resolve, conflict.strip(), keep, now_ms=node.now_ms())
