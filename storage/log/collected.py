"""How far this node's tombstone collection reached, under the versions that collected them
(docs/REPLICATION.md §6, "Pruning and snapshots").

Tombstone rows are no longer collected (storage/log/prune.py): a prune removes their log entries
only. A store pruned by an older version may lack rows whose tombstones it collected, up to the
stamp kept here; a snapshot's receiver still refuses to take back a row it lacks for that
reason (storage/log/snapshot.py). Nothing raises the mark any more, and no snapshot's mark is
trusted: one page that claimed a high mark could delete every row of its receiver.
"""

from __future__ import annotations

from feral.storage.db.connection import Connection

__all__ = ["collected_through"]

_KEY = "collected_through"


def collected_through(conn: Connection) -> int:
    """The newest stamp up to which this node may lack a row because a tombstone was
    collected (0: none was)."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (_KEY,)).fetchone()
    return 0 if row is None else int(row[0])
