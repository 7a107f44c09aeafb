"""A hostile paired device forging another origin's entry (issue 11, finding 7), or sending a
snapshot page nobody asked for (issue 23, #2).

Each ``(origin, hlc)`` names one write. A forged entry under a stamp a node already holds, with
other content, must be an integrity alarm (storage/log/integrity.py) and change nothing: not the
rows, not the log, not the vector. The forged page goes through the node's own ``apply_page``,
as a page from a peer does. A forged snapshot page goes onto the wire, in front of whatever the
peer sent, and the receiver's session must refuse it before the node sees it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from feral.storage.log import delta_log
from feral.storage.memory import export
from feral.storage.store import run_write
from feral.sync.codec import encode_message
from feral.sync.delta import Delta, Page
from feral.sync.hlc import COUNTER_BITS, MAX_PACKED
from feral.sync.schema import FACTS
from feral.sync.snapshot import SnapshotPage, SnapshotSession
from feral.sync.types import NodeId, RowId

from .simnode import MAX_SKEW_MS, SimNode

if TYPE_CHECKING:
    from .cluster import Cluster

__all__ = [
    "FORGED_ROW",
    "alarms_between_honest_devices",
    "forge_collision",
    "forge_snapshot",
    "relayed_entries",
]

FORGED_ROW = RowId("f" + "0" * 31)
FORGER = NodeId("hostile")


def relayed_entries(node: SimNode) -> list[tuple[NodeId, int]]:
    """``(origin, hlc)`` of each entry ``node`` holds from another origin."""
    rows = node.conn.execute(
        "SELECT origin, hlc FROM delta_log WHERE origin != ? ORDER BY origin, hlc",
        (node.node_id,),
    ).fetchall()
    return [(NodeId(o), int(h)) for o, h in rows]


def forge_collision(node: SimNode, origin: NodeId, hlc: int) -> list[str]:
    """Send ``node`` a forged entry at ``(origin, hlc)``; returns what went wrong (nothing if
    the alarm was raised and nothing changed)."""
    values = (FORGED_ROW, "forged", "says", "not what was written", 0.25, None, 1, False)
    forged = Delta("facts", FORGED_ROW, hlc, origin, values)
    conn = node.conn
    before = (export.state_digest(conn), delta_log.version_vector(conn))
    collided: list[Delta] = []
    now = max(node.wall(), hlc >> COUNTER_BITS)
    run_write(conn, delta_log.apply_page, Page(origin, 0, (forged,)), now_ms=now,
              max_skew_ms=MAX_SKEW_MS, peer=FORGER, collided=collided)  # fmt: skip
    problems = []
    if collided != [forged]:
        problems.append(f"{node.name}: no integrity alarm for a forged entry at {origin}:{hlc}")
    if (export.state_digest(conn), delta_log.version_vector(conn)) != before:
        problems.append(f"{node.name}: a forged entry at {origin}:{hlc} changed its state")
    return problems


def alarms_between_honest_devices(node: SimNode) -> list[str]:
    """Oracle, once the links are quiet: no integrity alarm stands but the forger's; honest
    devices end up holding each write alike (a nuke's erased copy included)."""
    rows = node.conn.execute(
        "SELECT origin, hlc, peer FROM integrity_alarms WHERE peer != ? ORDER BY origin, hlc",
        (FORGER,),
    ).fetchall()
    return [
        f"{node.name} raised an integrity alarm at {o[:6]}@{h} against {p[:6]}" for o, h, p in rows
    ]


def forge_snapshot(cluster: Cluster, receiver: SimNode, sender: SimNode) -> bool:
    """Hand ``receiver`` a forged final snapshot page from ``sender`` at once (as if it came
    first off the socket): empty, its vector covering everything the receiver holds and more,
    its collected mark the highest stamp. Taken, it would delete every row the receiver holds
    (as the old rule did) and raise its vector over entries it does not hold. Sent only where
    the receiver has not asked for a snapshot (a forged answer to a real Vector is the limit
    docs/PROTOCOL.md §11 states).
    Returns whether it was sent; the connection then counts as tampered with."""
    link = receiver.links.get(sender.node_id)
    connection = cluster.network.connection(sender.node_id, receiver.node_id)
    session = None if link is None else link.session
    if connection is None or not isinstance(session, SnapshotSession):
        return False
    version = session.protocol_version
    if version is None or session.expects_snapshot:
        return False
    vector = {origin: MAX_PACKED for origin in receiver.vector()} or {sender.node_id: MAX_PACKED}
    page = SnapshotPage(vector, {}, MAX_PACKED, FACTS.code, "", None, (), True)
    connection.tampered = True
    session.receive_frame(encode_message(page, version))
    receiver.pump(sender.node_id)
    return True
