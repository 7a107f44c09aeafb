"""A nuke, then a device that joins later (issue 11, #8: "a device paired after the nuke
receives them in its first catch-up").

A secret is a fact with words of its own (no other write uses them), so the oracle can look for
the words themselves rather than for stamps: in what a later device receives, and in the bytes
of its database file and WAL, which covers its rows, its log, its full-text index and the free
pages alike. A device that joins knows the words of every secret its sponsor (the device it
first syncs with) holds as a tombstone: the sponsor has erased them, so it can send them to no
one, and nothing else the new device hears comes from elsewhere. Only a restore from a backup
(taken before the nuke) brings the words back, by design; cluster.py's ``restore`` forgets them.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from feral.storage.memory import memories
from feral.sync.ids import fact_id
from feral.sync.types import RowId

if TYPE_CHECKING:
    from .cluster import Cluster
    from .simnode import SimNode

__all__ = ["Secrets", "erased_words_held"]


class Secrets:
    """The secrets written in one run: each row's id and its own word."""

    def __init__(self) -> None:
        self.words: dict[RowId, str] = {}

    def remember(self, node: SimNode) -> None:
        """Write a new secret on ``node`` (a write that fails on a full disk writes none)."""
        word = "w" + hashlib.sha256(f"secret {len(self.words)}".encode()).hexdigest()[:12]
        triple = ("secret", "is", word)
        if node.commit(memories.remember_fact, triple, now_ms=node.wall()):
            self.words[fact_id(*triple)] = word

    def nuke(self, node: SimNode, i: int) -> None:
        """Nuke the ``i``-th secret (modulo) of those ``node`` holds live."""
        live = [row_id for row_id in sorted(self.words) if _live(node, row_id)]
        if live:
            node.commit(memories.nuke, live[i % len(live)])

    def join(self, cluster: Cluster, sponsor: int) -> SimNode:
        """A new device joins, linked with ``sponsor``; it must never receive the words of the
        secrets the sponsor has nuked."""
        nuked = frozenset(
            word
            for row_id, word in self.words.items()
            if _tombstone(cluster.nodes[sponsor], row_id)
        )
        node = cluster.join(sponsor)
        node.erased_words = nuked
        cluster.stats["joins_after_a_nuke"] += bool(nuked)
        return node


def _deleted(node: SimNode, row_id: RowId) -> bool | None:
    """Whether ``node``'s row is a tombstone (``None``: it holds no such row)."""
    row = node.conn.execute("SELECT deleted FROM facts WHERE id = ?", (row_id,)).fetchone()
    return None if row is None else bool(row[0])


def _tombstone(node: SimNode, row_id: RowId) -> bool:
    return _deleted(node, row_id) is True


def _live(node: SimNode, row_id: RowId) -> bool:
    return _deleted(node, row_id) is False


def erased_words_held(node: SimNode, secrets: Secrets) -> list[str]:
    """Oracle: no word of a secret ``node`` holds as a tombstone, and none it was never to
    receive, is anywhere in its database's files (rows, log, full-text index, free pages, WAL):
    the nuke erased them (storage/log/erase.py), here and wherever the tombstone went."""
    words = node.erased_words | {
        word for row_id, word in secrets.words.items() if _tombstone(node, row_id)
    }
    if not words:
        return []
    files = [Path(f"{node.path}{suffix}") for suffix in ("", "-wal")]
    data = b"".join(path.read_bytes() for path in files if path.exists())
    held = sorted(word for word in words if word.encode() in data)
    return [f"{node.name}'s database holds nuked words {held}"] if held else []
