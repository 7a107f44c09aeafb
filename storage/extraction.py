"""Facts taken from a transcript: remembered with the episode they came from, and linked.

Each fact is an ordinary fact (the same triple is one row wherever it was said) whose
``source_episode`` names the episode made from the messages that stated it; a fact that was
already live keeps the provenance it had. The facts stated in one message are linked pairwise
by ``co_extracted`` edges (endpoints in id order, so the pair is one edge on every device).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

from feral.sync.types import NodeId

from .connection import Connection
from .memories import Stamp, remember_fact
from .memory_model import add_edge

__all__ = ["remember_extracted"]


def remember_extracted(
    conn: Connection,
    origin: NodeId,
    stamp: Stamp,
    groups: Sequence[Sequence[tuple[str, str, str]]],
    *,
    episode_id: str,
    now_ms: int,
) -> int:
    """Remember each message's facts (one group per message) and link each group's facts;
    returns how many facts the groups hold (repeats of a live fact included)."""
    count = 0
    for group in groups:
        ids = set()
        for triple in group:
            row = remember_fact(
                conn, origin, stamp, triple, now_ms=now_ms, source_episode=episode_id
            )
            ids.add(row["id"])
            count += 1
        for first, second in combinations(sorted(ids), 2):
            add_edge(conn, origin, stamp, "co_extracted", first, second, now_ms=now_ms)
    return count
