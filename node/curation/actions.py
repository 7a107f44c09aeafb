"""Curating a node's memories: boost, list, stats (by scope), gc and distill.

The commands (cli/memory/memory_rank_commands.py) and the API (node/api/routes.py) call these with
an open :class:`~feral.node.node.Node`; each write goes through :meth:`Kernel.commit`, so it is
stamped by the node's clock and reaches live links like any other. Ranges and formats are checked
here (the API's bodies check them again on the way in, with the same limits), so a caller that skips
the CLI's options still cannot store an importance of 0 or a malformed scope. A dry run reads and
never writes.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, cast

from feral.node.answers import (
    BriefMemory,
    DistillAnswer,
    GcAnswer,
    GcGroup,
    ListedMemory,
    MetaAnswer,
    ScopedStats,
    StatsAnswer,
)
from feral.node.settings.limits import MAX_IMPORTANCE
from feral.node.settings.scopes import DEFAULT_SCOPE, check_scope, session_scope
from feral.storage.absorb.conflicts import conflict_count
from feral.storage.memory import curation, listing, stats
from feral.storage.search import gc
from feral.storage.search.gc import GcPlan
from feral.storage.search.query import content_of
from feral.sync.errors import InvalidInput

from .memory_graph import conflicting_values
from .prune import prune_figures

if TYPE_CHECKING:
    from feral.node.kernel import Kernel

__all__ = [
    "DEFAULT_COMPACT_ABOVE",
    "DEFAULT_TTL_DAYS",
    "MAX_REASON_CHARS",
    "boost",
    "distill",
    "list_memories",
    "memory_stats",
    "nuke_scope",
    "run_gc",
    "scoped_stats",
]

DEFAULT_TTL_DAYS = 30
"""Session facts untouched for this long are archived by ``gc``: a session's scratch facts
outlive the session by a month, time enough to ``distill`` what matters."""
DEFAULT_COMPACT_ABOVE = 20
"""More live facts than this with one subject and predicate are consolidated by ``gc``."""
MAX_REASON_CHARS = 1000
"""A boost's reason fits ``memory_meta.importance_note`` (1 KiB) in any script."""


def check_importance(importance: float) -> float:
    """``importance`` if it is in (0, :data:`MAX_IMPORTANCE`]; else :class:`InvalidInput`."""
    if not 0 < importance <= MAX_IMPORTANCE:  # NaN fails this too
        raise InvalidInput(f"importance must be above 0 and at most {MAX_IMPORTANCE:g}")
    return float(importance)


async def boost(node: Kernel, row_id: str, importance: float, reason: str = "") -> MetaAnswer:
    """Set a memory's replicated importance multiplier; returns its meta row."""
    from feral.node.secrets.scan import refuse_secrets  # its patterns: on a boost only

    check_importance(importance)
    if len(reason) > MAX_REASON_CHARS or not reason.isprintable():
        raise InvalidInput(f"reason must be printable, at most {MAX_REASON_CHARS} characters")
    refuse_secrets([reason])  # the reason replicates with the importance
    meta = await node.commit(curation.boost, row_id, importance, reason.strip())
    return cast(MetaAnswer, dataclasses.asdict(meta))


async def list_memories(
    node: Kernel, *, tier: str | None, scope: str | None, status: str, limit: int
) -> list[ListedMemory]:
    """Memories newest first with their meta and status (storage/memory/listing.py)."""
    if tier is not None and tier not in listing.LISTED_TIERS:
        raise InvalidInput(f"tier must be one of {', '.join(listing.LISTED_TIERS)}")
    if status not in listing.STATUSES:
        raise InvalidInput(f"status must be one of {', '.join(listing.STATUSES)}")
    if scope is not None:
        check_scope(scope)
    rows = await node.store.read(
        listing.list_memories, tier=tier, scope=scope, status=status, limit=limit
    )
    for row in rows:
        row["content"] = content_of(row)
        row.pop("table", None)
    return cast(list[ListedMemory], rows)


async def memory_stats(node: Kernel) -> StatsAnswer:
    """The counts ``Node.stats`` answers: tiers, vectors, conflicts, whether vectors search."""
    counted = await node.store.read(stats.database_stats)
    return {
        **counted,
        "node_id": node.node_id,
        "conflicts": await node.store.read(conflict_count),  # as ``sync status``
        "conflicting_values": len(await node.store.read(conflicting_values)),
        "vector_search": (
            "on"
            if node.embedder is not None
            else 'off: no embedding model is configured (memory.embedder is "none")'
        ),
    }


async def scoped_stats(node: Kernel, scope: str | None) -> ScopedStats:
    """``feral memory stats``, its tiers counted within ``scope`` when one is given."""
    prune = await prune_figures(node)
    result = cast(ScopedStats, {**await memory_stats(node), "prune": prune})
    if scope is not None:
        result["scope"] = check_scope(scope)
        result["tiers"] = await node.store.read(listing.scope_counts, scope)
    return result


def _brief(row: dict[str, Any]) -> BriefMemory:
    return {"id": str(row["id"]), "content": content_of(row)}


def _gc_report(plan: GcPlan, made: list[str], dry_run: bool) -> GcAnswer:
    groups: list[GcGroup] = [
        {
            "scope": group.scope,
            "subject": group.triple[0],
            "predicate": group.triple[1],
            "consolidated_id": made[i] if made else None,
            "members": [_brief(m) for m in group.members],
        }
        for i, group in enumerate(plan.groups)
    ]
    return {"dry_run": dry_run, "archived": [_brief(r) for r in plan.stale], "groups": groups}


async def run_gc(
    node: Kernel, *, ttl_days: int, compact_above: int, dry_run: bool = False
) -> GcAnswer:
    """Archive stale session facts and consolidate crowded groups (storage/search/gc.py)."""
    if ttl_days < 0 or compact_above < 1:
        raise InvalidInput("ttl-days must be 0 or more and compact-above at least 1")
    options = {"now_ms": node.now_ms(), "ttl_days": ttl_days, "compact_above": compact_above}
    if dry_run:
        plan = await node.store.read(lambda conn: gc.plan_gc(conn, **options))
        return _gc_report(plan, [], True)
    plan, made = await node.commit(gc.apply_gc, **options)
    return _gc_report(plan, made, False)


async def nuke_scope(node: Kernel, scope: str) -> list[str]:
    """Hard-delete every memory of an ``agent:`` or ``session:`` scope; the ids erased.

    The user's scope is refused: it holds every memory without a scope, and erasing all of them
    at once is not what one command should do (nuke them by id).
    """
    if check_scope(scope) == DEFAULT_SCOPE:
        raise InvalidInput("nuke --scope takes an agent: or session: scope, not user's")
    return await node.commit(curation.nuke_scope, scope)


async def distill(node: Kernel, session_id: str, *, dry_run: bool = False) -> DistillAnswer:
    """Promote a session's live facts to the user's scope."""
    scope = session_scope(session_id)
    if dry_run:
        rows = await node.store.read(gc.plan_distill, scope)
    else:
        rows = await node.commit(gc.apply_distill, scope, now_ms=node.now_ms())
    return {"dry_run": dry_run, "scope": scope, "promoted": [_brief(r) for r in rows]}
