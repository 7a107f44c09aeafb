"""The API's curation routes: list, archive, restore, boost, gc and distill.

- ``GET  /api/memory/list``      ``?tier=&scope=&status=&limit=`` (as ``feral memory list --json``)
- ``POST /api/memory/archive``   ``{"id"}`` and ``POST /api/memory/restore`` ``{"id"}``
- ``POST /api/memory/boost``     ``{"id", "importance", "reason"}``
- ``POST /api/memory/gc``        ``{"ttl_days", "compact_above", "dry_run"}``
- ``POST /api/memory/distill``   ``{"session", "dry_run"}``

The bodies are structures like the others (node/api/bodies.py): a field that does not fit is a
422 naming it, an unknown id a 404, and the answers have the shapes of the CLI's ``--json``.
"""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta, Struct
from starlette.requests import Request
from starlette.routing import BaseRoute, Route

from feral.node.curation import actions as curation
from feral.node.settings.limits import EpisodeLimit, Importance, Text
from feral.node.settings.scopes import Scope
from feral.node.settings.validation import one_of
from feral.storage.memory.listing import LISTED_TIERS, STATUSES

from ..answers import DistillAnswer, EpisodeRow, FactRow, GcAnswer, ListedMemory, MetaAnswer
from ..node import Node
from .bodies import fit, read_json
from .endpoints import Wrap
from .query_check import reads_query

__all__ = [
    "ArchiveRequest",
    "BoostRequest",
    "DistillRequest",
    "GcRequest",
    "ListQuery",
    "curation_routes",
]

Reason = Annotated[str, Meta(max_length=curation.MAX_REASON_CHARS)]
_TIERS = tuple(LISTED_TIERS)
TierName = Annotated[
    str, Meta(pattern=f"^({'|'.join(_TIERS)})$", extra={"requirement": one_of(_TIERS)})
]
StatusName = Annotated[
    str, Meta(pattern=f"^({'|'.join(STATUSES)})$", extra={"requirement": one_of(STATUSES)})
]
SessionId = Annotated[
    str,
    Meta(
        pattern=r"^[A-Za-z0-9._@-]{1,128}$",
        extra={"requirement": "must be 1-128 of A-Z a-z 0-9 . _ @ -"},
    ),
]


class ListQuery(Struct, frozen=True, forbid_unknown_fields=True):
    """The query parameters of ``GET /api/memory/list``; others are refused."""

    tier: TierName | None = None
    scope: Scope | None = None
    status: StatusName = "active"
    limit: EpisodeLimit = 50


class ArchiveRequest(Struct, frozen=True, forbid_unknown_fields=True):
    """The memory to archive or restore."""

    id: Text


class BoostRequest(Struct, frozen=True, forbid_unknown_fields=True):
    """A memory's new importance multiplier (above 0, at most 10) and why."""

    id: Text
    importance: Importance
    reason: Reason = ""


class GcRequest(Struct, frozen=True, forbid_unknown_fields=True):
    """What ``gc`` archives (session facts older than ``ttl_days``) and consolidates."""

    ttl_days: Annotated[int, Meta(ge=0)] = curation.DEFAULT_TTL_DAYS
    compact_above: Annotated[int, Meta(ge=1)] = curation.DEFAULT_COMPACT_ABOVE
    dry_run: bool = False


class DistillRequest(Struct, frozen=True, forbid_unknown_fields=True):
    """The session whose facts to promote to the user's scope."""

    session: SessionId
    dry_run: bool = False


def curation_routes(node: Node, endpoint: Wrap) -> list[BaseRoute]:
    """The routes, each answered through ``endpoint`` (JSON, and JSON errors)."""

    @reads_query
    async def list_memories(request: Request) -> list[ListedMemory]:
        query = fit(dict(request.query_params), ListQuery, from_strings=True, top="the query")
        return await curation.list_memories(
            node, tier=query.tier, scope=query.scope, status=query.status, limit=query.limit
        )

    async def archive(request: Request) -> FactRow | EpisodeRow:
        body = await read_json(request, ArchiveRequest)
        return await node.set_archived(body.id, True)

    async def restore(request: Request) -> FactRow | EpisodeRow:
        body = await read_json(request, ArchiveRequest)
        return await node.set_archived(body.id, False)

    async def boost(request: Request) -> MetaAnswer:
        body = await read_json(request, BoostRequest)
        return await curation.boost(node, body.id, body.importance, body.reason)

    async def gc(request: Request) -> GcAnswer:
        body = await read_json(request, GcRequest)
        return await curation.run_gc(
            node, ttl_days=body.ttl_days, compact_above=body.compact_above, dry_run=body.dry_run
        )

    async def distill(request: Request) -> DistillAnswer:
        body = await read_json(request, DistillRequest)
        return await curation.distill(node, body.session, dry_run=body.dry_run)

    return [
        Route("/api/memory/list", endpoint(list_memories), methods=["GET"]),
        Route("/api/memory/archive", endpoint(archive), methods=["POST"]),
        Route("/api/memory/restore", endpoint(restore), methods=["POST"]),
        Route("/api/memory/boost", endpoint(boost), methods=["POST"]),
        Route("/api/memory/gc", endpoint(gc), methods=["POST"]),
        Route("/api/memory/distill", endpoint(distill), methods=["POST"]),
    ]
