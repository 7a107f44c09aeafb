"""Noting what a search retrieved, for access strength (storage/memory/access_strength.py).

After each search the memories it answered with are noted as retrieved, in a local table: no
stamp, no delta-log entry, nothing for a peer, and no wake of the links (a read changes nothing
anyone else holds). It is bookkeeping, so it never fails a search: a database open only for
reading (a full disk) notes nothing, and a write that fails is dropped with one line in the
log at INFO (`feral serve` shows it; a CLI search prints nothing but its answer).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from feral.storage.db.errors import StorageError
from feral.storage.memory.access_strength import record_access
from feral.storage.store import Store

__all__ = ["RETRIEVED_TIERS", "note_retrieved"]

log = logging.getLogger("feral.access")

RETRIEVED_TIERS = frozenset({"episodic", "semantic"})
"""The tiers whose hits count as retrievals (the execution log is not memory to rehearse)."""


async def note_retrieved(store: Store, hits: Sequence[Mapping[str, object]], now_ms: int) -> None:
    """One retrieval at ``now_ms`` of each memory among ``hits`` (a search's results)."""
    ids = [str(hit["id"]) for hit in hits if hit.get("tier") in RETRIEVED_TIERS]
    if not ids or store.read_only is not None:
        return
    try:
        await store.write(record_access, ids, now_ms)
    except StorageError as exc:
        log.info("! access strength not noted: %s", exc)
