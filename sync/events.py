"""The events a :class:`~feral.sync.session.SyncSession` raises for the node to act on.

Each is a frozen value; the session module re-exports them, so callers name them from there.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .delta import Page
from .snapshot_messages import SnapshotPage
from .types import NodeId, VersionVector

__all__ = [
    "Authenticated",
    "DeltasRequested",
    "Event",
    "Failed",
    "JoinOffered",
    "PageAcked",
    "PageReceived",
    "PeerCaughtUp",
    "PeerPending",
    "SnapshotAcked",
    "SnapshotCursor",
    "SnapshotReceived",
    "SnapshotRequested",
]


@dataclass(frozen=True)
class Authenticated:
    """The peer proved its identity; ``clock_offset_ms`` is its wall clock minus ours."""

    peer: NodeId
    name: str
    epoch: str
    clock_offset_ms: int


@dataclass(frozen=True)
class DeltasRequested:
    """Answer with :meth:`SyncSession.send_pages` (``limit`` deltas at most) or ``send_caught_up``.

    ``since`` is what the peer holds plus what is already on its way to it. A ``limit`` of 0
    asks only for a fresh ``CaughtUp`` (this node's vector and entry counts): nothing is left
    to send, but what this node holds changed since it last said so.
    """

    since: VersionVector
    limit: int
    announce: bool = False
    """The first request after the peer's Vector: also answer :meth:`SyncSession.send_pending`
    with how many entries the peer lacks, so it can show a backlog and a catch-up's progress."""
    ceiling: int | None = None
    """The newest stamp the peer takes now (sync/held_back.py): send no entry above it."""


@dataclass(frozen=True)
class PageReceived:
    """Apply ``page`` in one transaction, then call :meth:`SyncSession.ack` (or ``fail``)."""

    page: Page


@dataclass(frozen=True)
class PageAcked:
    """The peer committed our page of ``deltas`` entries: it holds ``origin`` up to ``hlc``."""

    origin: NodeId
    hlc: int
    deltas: int = 0


@dataclass(frozen=True)
class PeerCaughtUp:
    """The peer has sent everything we lacked; ``vector``, ``entries`` and ``digest`` are what
    it holds (messages.CaughtUp)."""

    vector: VersionVector
    entries: dict[NodeId, int] = field(default_factory=dict)
    digest: bytes = b""


@dataclass(frozen=True)
class PeerPending:
    """The peer is about to stream ``entries`` log entries we lack (messages.Pending)."""

    entries: int


@dataclass(frozen=True)
class Failed:
    """The link failed: a refusal we sent (``remote`` False) or one the peer sent."""

    code: str
    message: str
    remote: bool
    close_code: int


@dataclass(frozen=True)
class JoinOffered:
    """An unpaired peer proved its key and an invitation's (sync/invitation.py): answer with
    :meth:`SyncSession.accept_join` once the invitation is found open and consumed, or refuse."""

    peer: NodeId
    name: str
    invitation_key: bytes


@dataclass(frozen=True)
class SnapshotCursor:
    """Where a snapshot being sent stands: its vector and counts, and the next rows to read."""

    vector: VersionVector
    entries: dict[NodeId, int]
    table: int
    after: str


@dataclass(frozen=True)
class SnapshotRequested:
    """Answer with :meth:`SnapshotSession.send_snapshot`: the next snapshot pages from
    ``cursor``, ``limit`` rows in all."""

    cursor: SnapshotCursor
    limit: int


@dataclass(frozen=True)
class SnapshotReceived:
    """Apply ``page`` in one transaction (storage/log/snapshot.py), then call
    :meth:`SnapshotSession.ack_snapshot` (or ``fail``)."""

    page: SnapshotPage


@dataclass(frozen=True)
class SnapshotAcked:
    """The peer committed a snapshot page of ``rows`` rows."""

    rows: int


Event = (
    Authenticated | DeltasRequested | PageReceived | PageAcked | PeerCaughtUp | PeerPending | Failed
    | JoinOffered | SnapshotRequested | SnapshotReceived | SnapshotAcked
)  # fmt: skip
