"""The merge of one row's writes, as pure functions: the reference every store is held to.

Between two live writes the later wins (last-write-wins). Order: the packed HLC first, then the
origin node id (cr-sqlite's site-id tie-break). A node never stamps two writes with one HLC, so
two deltas with an equal ``(hlc, origin)`` are the same write; applying it again changes nothing.

A tombstone (a nuke) wins over every live write of its row, whatever the stamps
(docs/REPLICATION.md §3, "Tombstones win"): an archive made on a device that had not heard of the
nuke, stamped after it, must not bring the row or its words back. A row that has met a tombstone
is a tombstone at the greatest version among all its writes, so the state is a join: ``deleted``
is the OR of the writes', the version their maximum. That keeps the merge idempotent,
commutative and associative, so every order of arrival ends in the same row. A device that
means to write the same content again after a nuke writes a new row (sync/ids.py,
:func:`~feral.sync.ids.reborn_id`).
"""

from __future__ import annotations

import enum

from .delta import Delta, Version

__all__ = ["Decision", "decide", "merge_row", "wins"]


class Decision(enum.Enum):
    """What to do with an incoming delta."""

    APPLY = "apply"
    """The delta is newer than the row: the row becomes the delta."""

    SKIP = "skip"
    """The row already holds this write or a newer one."""


def wins(incoming: Version, current: Version | None) -> bool:
    """Whether ``incoming`` beats ``current`` between two writes of one kind (both live, or
    both tombstones): strictly greater; nothing beats itself."""
    return current is None or incoming > current


def decide(current: Version | None, incoming: Delta) -> Decision:
    """Decide whether ``incoming`` replaces a row of the same kind whose version is ``current``."""
    return Decision.APPLY if wins(incoming.version, current) else Decision.SKIP


def merge_row(current: Delta | None, incoming: Delta) -> Delta:
    """The row after ``incoming`` meets ``current`` (module docstring): the later of two live
    writes; a tombstone at the later version if either is one."""
    if current is None:
        return incoming
    later = incoming if wins(incoming.version, current.version) else current
    if later.is_tombstone or not (current.is_tombstone or incoming.is_tombstone):
        return later
    return Delta(later.table, later.row_id, later.hlc, later.origin, None, later.prior)
