"""How far this node's tombstone collection reaches: the stamp up to which a row it has seen
and no longer holds may be gone because a tombstone was collected (docs/PROTOCOL.md §7,
"Pruning and snapshots").

A snapshot's receiver drops a row it holds and the snapshot lacks only when the row's stamp is
at or below the sender's mark, and takes no row back that it lacks at or below its own
(storage/snapshot.py). The vector alone cannot tell it that: a
vector may claim a write its node never held (a database restored from an older copy writes
again above what it lost; a node that took a snapshot from such a one adopts its vector), so
a young tombstone missing from a snapshot means "never held" as often as "collected". Every
collected tombstone is older than the retention window, so the mark stays behind it.

The mark rises where rows go: a prune raises it to the newest stamp of a tombstone it collected
(storage/prune.py), and a snapshot page raises the receiver's to the sender's, whose absences it
has just copied. Taking a snapshot's vector never raises it. It is local bookkeeping, kept in
``meta``, in the transaction that removes the rows; a store from before it was kept starts at 0
(its receivers keep what they would have dropped, and collect it by their own prunes).
"""

from __future__ import annotations

from .connection import Connection

__all__ = ["collected_through", "raise_collected_through"]

_KEY = "collected_through"


def collected_through(conn: Connection) -> int:
    """The newest stamp up to which this node may lack a row because a tombstone was
    collected (0: none was)."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (_KEY,)).fetchone()
    return 0 if row is None else int(row[0])


def raise_collected_through(conn: Connection, hlc: int) -> None:
    """Rows up to ``hlc`` may now be gone here (inside the write's transaction)."""
    if hlc <= 0:
        return
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = max(value, excluded.value)",
        (_KEY, hlc),
    )
