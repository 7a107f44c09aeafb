"""Pruning on the simulated devices, and what the oracles allow once logs are pruned.

The devices prune with the product's code (storage/log/prune.py, looked up at call time so
broken.py can swap it). :func:`prune_device` also checks the spec's rule against the truth the
simulation knows: no entry goes that a peer which still holds pruning back (heard from within
the window) does not actually hold, whatever the pruning node has recorded of it.

Once a log is pruned (or a device took a snapshot), it holds each origin's entries only above
that origin's floor (storage/log/snapshot.py's ``log_floor``); the oracles compare logs there, and a
tombstone the ledger says wins may have been collected.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from feral.storage.log import prune, snapshot
from feral.storage.store import run_write
from feral.sync.hlc import COUNTER_BITS
from feral.sync.types import NodeId

from .model import Record, SimulationError, store_records
from .replica import RowKey

if TYPE_CHECKING:
    from .cluster import Cluster
    from .simnode import SimNode

__all__ = [
    "RETENTION_MS",
    "Collected",
    "above_floors",
    "expected_after_pruning",
    "prune_device",
]

RETENTION_MS = 20 * 60_000
"""The simulated retention window: 20 minutes of virtual time (the machines jump past it)."""


@dataclass
class Collected:
    """The tombstones the devices' prunes collected (a snapshot's receiver drops only those).

    A device judges a tombstone's age by its own clock, so one whose clock is ahead (within the
    skew window or beyond it) collects a tombstone the others still keep: ``settled_at`` is the
    true time by which every such tombstone is older than the window everywhere.
    """

    tombstones: set[tuple[RowKey, int, NodeId]] = field(default_factory=set)
    settled_at: int = 0

    def record(self, gone: set[tuple[RowKey, int, NodeId]], now_ms: int) -> None:
        self.tombstones |= gone
        for _, hlc, _ in gone:
            if (old_at := (hlc >> COUNTER_BITS) + RETENTION_MS + 1) > now_ms:
                self.settled_at = max(self.settled_at, old_at)


def prune_device(cluster: Cluster, node: SimNode) -> int:
    """Prune ``node`` as ``feral sync prune`` does; returns how many entries went.

    Raises:
        SimulationError: an entry went that a holding peer does not hold.
    """
    before, held = _stamps(node), _tombstones(node)
    peers = [n for n in cluster.nodes if n is not node]
    holding = _holding(node, peers)
    run_write(node.conn, prune.apply_prune, paired=[p.node_id for p in peers],
              now_ms=node.wall(), window_ms=RETENTION_MS)  # fmt: skip
    cluster.collected.record(held - _tombstones(node), cluster.time.now)
    gone = before - _stamps(node)
    for origin, hlc in gone:
        for peer in holding:
            if not peer.is_down and hlc > peer.vector().get(origin, 0):
                raise SimulationError(
                    f"{node.name} pruned {origin[:6]}@{hlc}, which {peer.name} (heard from "
                    "within the window) does not hold"
                )
    cluster.stats["pruned_entries"] += len(gone)
    return len(gone)


def _holding(node: SimNode, peers: list[SimNode]) -> list[SimNode]:
    rows = dict(node.conn.execute("SELECT node_id, last_sync_at FROM peer_status").fetchall())
    cutoff = node.wall() - RETENTION_MS
    return [p for p in peers if rows.get(p.node_id) is not None and rows[p.node_id] >= cutoff]


def _stamps(node: SimNode) -> set[tuple[NodeId, int]]:
    return {(NodeId(o), int(h)) for o, h in node.conn.execute("SELECT origin, hlc FROM delta_log")}


def _tombstones(node: SimNode) -> set[tuple[RowKey, int, NodeId]]:
    records = store_records(node.conn).items()
    return {(key, hlc, origin) for key, (_, hlc, origin, deleted) in records if deleted}


def above_floors(node: SimNode, stamps: dict[NodeId, list[int]]) -> dict[NodeId, list[int]]:
    """``stamps`` without those at or below ``node``'s floors (what its log need not hold)."""
    floors = snapshot.log_floors(node.conn)
    kept = {o: [h for h in hs if h > floors.get(o, 0)] for o, hs in stamps.items()}
    return {o: hs for o, hs in kept.items() if hs}


def floors_json(node: SimNode) -> str:
    return json.dumps(snapshot.log_floors(node.conn), sort_keys=True)


def expected_after_pruning(cluster: Cluster, records: dict[RowKey, Record]) -> dict[RowKey, Record]:
    """The ledger's last-write-wins winners, as pruning leaves them in ``records``.

    Tombstone rows are never collected (storage/log/prune.py), so no row may be missing, and none a
    nuke won may come back, not even once a device was away past the window (the defect of the
    rule that collected them: such a device brought nuked rows back). A tombstone a store
    collected under that older rule is still allowed to be missing.
    """
    expected: dict[RowKey, Record] = {}
    for key, winner in cluster.ledger.expected().items():
        held = records.get(key)
        collected = (key, winner[1], winner[2]) in cluster.collected.tombstones
        if winner[3] and held is None and collected:
            continue  # a collected tombstone
        expected[key] = winner
    return expected
