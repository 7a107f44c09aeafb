"""The answer of ``feral sync status`` and ``GET /api/sync/status`` (node/links/status.py), as
types.

Beside node/answers.py (the memory's answers) and for the same reasons: plain dicts at runtime,
so the JSON is unchanged, and the OpenAPI document's schema made from them. The integrity
alarms are storage's answer as it is (:mod:`feral.storage.log.integrity`).
"""

from __future__ import annotations

from typing import TypedDict

from feral.storage.log.integrity import IntegrityAlarms, LatestAlarm
from feral.sync.types import NodeId

__all__ = [
    "CatchUp",
    "ClockAnswer",
    "IntegrityAlarms",
    "LatestAlarm",
    "LinkState",
    "PeerRow",
    "StatusAnswer",
]


class CatchUp(TypedDict):
    """How far the stream a peer announced has arrived."""

    received: int
    total: int
    percent: int


class LinkState(TypedDict):
    """Whether a link to the peer is up now, since when, and when it was last seen."""

    link_up: bool
    link_up_since: int | None
    last_seen_at: int | None


class PeerRow(LinkState):
    """One paired peer as status shows it (DESIGN §6)."""

    node_id: str
    name: str
    url: str | None
    reachable: bool
    encrypted: bool
    certificate: str | None
    """The fingerprint of the TLS certificate the link runs under, if encrypted."""
    last_sync_at: int | None
    hlc_lag_ms: int | None
    backlog: int
    backlog_to_send: int
    backlog_to_receive: int | None
    """What is known to be on its way from the peer (``None``: unknown)."""
    catch_up: CatchUp | None
    in_sync: bool
    sync_state: str
    last_known_equal: bool | None
    diverged: bool
    integrity_alarms: int
    clock_offset_ms: int | None
    last_error: str | None
    last_error_at: int | None
    errors: int
    rows_received: int


class ClockAnswer(TypedDict):
    """This node's newest own stamp, how far it is ahead of the clock, and the warning if any."""

    newest_own_hlc: int
    ahead_ms: int
    warning: str | None


class StatusAnswer(TypedDict):
    """This node's clock and state digest, and each paired peer's row."""

    node_id: str
    name: str
    hlc: int
    state_digest: str
    vector: dict[NodeId, int]
    integrity_alarms: IntegrityAlarms
    conflicts: int
    max_clock_skew_ms: int
    embed_pending: int
    clock: ClockAnswer
    now_ms: int
    in_sync_window_ms: int
    peers: list[PeerRow]
