"""The last-write-wins decision, as a pure function: the reference every store is held to.

Order: the packed HLC first, then the origin node id (cr-sqlite's site-id tie-break). A node never
stamps two writes with one HLC, so two deltas with an equal ``(hlc, origin)`` are the same write;
applying it again changes nothing. That makes the merge idempotent, commutative and associative,
and it means "delete vs update at an equal stamp" cannot arise between two different writes: the
higher origin id wins, whichever of the two is the tombstone.
"""

from __future__ import annotations

import enum

from .delta import Delta, Version

__all__ = ["Decision", "decide", "wins"]


class Decision(enum.Enum):
    """What to do with an incoming delta."""

    APPLY = "apply"
    """The delta is newer than the row: the row becomes the delta."""

    SKIP = "skip"
    """The row already holds this write or a newer one."""


def wins(incoming: Version, current: Version | None) -> bool:
    """Whether ``incoming`` beats ``current`` (strictly greater; nothing beats itself)."""
    return current is None or incoming > current


def decide(current: Version | None, incoming: Delta) -> Decision:
    """Decide whether ``incoming`` replaces a row whose version is ``current``."""
    return Decision.APPLY if wins(incoming.version, current) else Decision.SKIP
