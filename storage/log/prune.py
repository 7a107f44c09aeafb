"""Collecting the log and tombstones (DESIGN §4; docs/REPLICATION.md §6, "Pruning").

A log entry may go once every paired peer that still holds pruning back has acknowledged it
(its acks and CaughtUps, kept in ``peer_status.vector``) **and** it is older than the retention
window (``sync.retention_days``, 30 by default), judged by the wall clock in its stamp.

Tombstone rows are never collected: they hold no words (only the row's id and version), and a
tombstone wins over every write of its row (sync/merge.py), so keeping it is what stops a
device back from longer than the window, or one that joins later and meets such a device, from
bringing a nuked row and its words back. Once their log entries go, the snapshots that peers
below the floor receive carry them instead. ``prunable_tombstones`` counts the tombstones whose
log entries a prune would remove.

Which peers hold pruning back: a paired peer whose last CaughtUp (``last_sync_at``) is within
the window. A peer silent longer than that, or one never heard from, no longer does: it gets a
snapshot when it comes back (storage/log/snapshot.py), so what it missed is never needed again.

Pruned entries leave the entry counts as they were (counts say how many entries of each origin
a node has *taken*, which is what the hole check compares, sync/holes.py), and raise the
origin's floor (``log_floor``): a peer below it is sent a snapshot.

A plan is read first (:func:`plan_prune`): a dry run prints it and writes nothing; a real run
plans again inside its write transaction (:func:`apply_prune`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from feral.storage.db.connection import Connection
from feral.sync.schema import TABLES
from feral.sync.types import NodeId

from .delta_log import version_vector
from .snapshot import raise_floor

__all__ = ["DAY_MS", "PeerHold", "PrunePlan", "apply_prune", "plan_prune"]

DAY_MS = 86_400_000


@dataclass(frozen=True)
class PeerHold:
    """One paired peer, as pruning sees it."""

    node_id: NodeId
    name: str
    last_sync_at: int | None
    holds: bool
    """Whether it holds pruning back (heard from within the window)."""
    lacking: int
    """How many of this node's log entries it has not acknowledged."""


@dataclass
class PrunePlan:
    """What a prune would remove now, and why not more."""

    now_ms: int
    window_ms: int
    limits: dict[NodeId, int] = field(default_factory=dict)
    """Per origin, the newest stamp that may go: entries at or below it are collected."""
    entries: int = 0
    tombstones: int = 0
    log_entries: int = 0
    peers: list[PeerHold] = field(default_factory=list)

    @property
    def oldest_unacknowledged(self) -> PeerHold | None:
        """The peer heard from longest ago among those that lack some entries."""
        lagging = [p for p in self.peers if p.lacking]
        return min(lagging, key=lambda p: p.last_sync_at or 0, default=None)


def _peer_holds(
    conn: Connection, paired: Iterable[NodeId], now_ms: int, window_ms: int
) -> tuple[list[PeerHold], list[dict[str, int]]]:
    """Each paired peer, and the vectors of those that hold pruning back."""
    holds, vectors = [], []
    mine = version_vector(conn)
    for peer in sorted(set(paired)):
        row = conn.execute(
            "SELECT name, last_sync_at, vector FROM peer_status WHERE node_id = ?", (peer,)
        ).fetchone()
        name, seen, raw = row if row else ("", None, "{}")
        vector = json.loads(raw)
        holding = seen is not None and int(seen) >= now_ms - window_ms
        lacking = sum(_count_above(conn, o, vector.get(o, 0)) for o, h in mine.items()
                      if h > vector.get(o, 0))  # fmt: skip
        holds.append(PeerHold(peer, str(name), seen, holding, lacking))
        if holding:
            vectors.append(vector)
    return holds, vectors


def _count_above(conn: Connection, origin: str, hlc: int) -> int:
    row = conn.execute(
        "SELECT count(*) FROM delta_log WHERE origin = ? AND hlc > ?", (origin, hlc)
    ).fetchone()
    return int(row[0])


def plan_prune(
    conn: Connection, *, paired: Iterable[NodeId], now_ms: int, window_ms: int
) -> PrunePlan:
    """What may be collected now (a read)."""
    plan = PrunePlan(now_ms, window_ms)
    plan.peers, vectors = _peer_holds(conn, paired, now_ms, window_ms)
    cutoff = max(now_ms - window_ms, 0) << 16  # stamps below it are older than the window
    for origin in version_vector(conn):
        acked = min((int(v.get(origin, 0)) for v in vectors), default=cutoff)
        limit = min(cutoff - 1, acked)
        if limit > 0:
            plan.limits[origin] = limit
            plan.entries += conn.execute(
                "SELECT count(*) FROM delta_log WHERE origin = ? AND hlc <= ?", (origin, limit)
            ).fetchone()[0]
    plan.tombstones = len(_collectable(conn, plan.limits))
    plan.log_entries = conn.execute("SELECT count(*) FROM delta_log").fetchone()[0]
    return plan


def _collectable(conn: Connection, limits: dict[NodeId, int]) -> list[tuple[str, str, int]]:
    """Tombstones whose version lies under its origin's limit and whose log entry is still
    held (a prune removes it; the row stays), as ``(table, id, hlc)``.

    The rule reads only the row's version, never this log's other entries of the row (which
    differ between nodes: one that took a snapshot lacks the entries below it), so two nodes at
    the same holdings, pruned at the same time, collect the same tombstones.
    """
    found: list[tuple[str, str, int]] = []
    limits_json = json.dumps(limits)
    for table in TABLES:
        rows = conn.execute(
            f'SELECT id, hlc FROM "{table.name}" AS t WHERE deleted = 1 '
            "AND hlc <= coalesce(json_extract(?, '$.' || origin), 0) AND EXISTS (SELECT 1 FROM "
            "delta_log AS l WHERE l.origin = t.origin AND l.hlc = t.hlc)",
            (limits_json,),
        )
        found.extend((table.name, str(r[0]), int(r[1])) for r in rows)
    return found


def apply_prune(
    conn: Connection, *, paired: Iterable[NodeId], now_ms: int, window_ms: int
) -> PrunePlan:
    """Plan again and collect, inside the caller's write transaction; returns what went."""
    plan = plan_prune(conn, paired=paired, now_ms=now_ms, window_ms=window_ms)
    for origin, limit in plan.limits.items():
        top = conn.execute(
            "SELECT max(hlc) FROM delta_log WHERE origin = ? AND hlc <= ?", (origin, limit)
        ).fetchone()[0]
        if top is None:
            continue
        conn.execute("DELETE FROM delta_log WHERE origin = ? AND hlc <= ?", (origin, limit))
        raise_floor(conn, origin, int(top))
    return plan
