"""The reference replica: rows, per-origin log and version vector in plain dictionaries.

It does what storage/log/delta_log.py does with SQL, using only :func:`feral.sync.merge.merge_row`
for the merge, so the differential machine can hold the SQLite store to it (DESIGN §4: "the pure
``decide()`` in sync/ is the reference the simulations hold it to"). It is deliberately naive: every
rule is written the obvious way, not the fast way.
"""

from __future__ import annotations

from collections.abc import Iterable

from feral.sync import merge
from feral.sync.delta import MAX_PAGE_DELTAS, Delta, Page, Version
from feral.sync.errors import ProtocolError
from feral.sync.hlc import check_skew
from feral.sync.schema import Value
from feral.sync.types import NodeId, RowId, VersionVector
from feral.sync.unknown import wire_form

__all__ = ["MemoryReplica", "RowKey", "row_record"]

RowKey = tuple[str, RowId]
"""A replicated row: ``(table name, row id)``."""


def row_record(delta: Delta) -> tuple[tuple[Value, ...], int, NodeId, bool]:
    """What a row holds once ``delta`` has won it: values, hlc, origin, deleted."""
    wire = tuple(wire_form(delta.schema(), delta.row_values(), ()))  # sync/unknown.py
    return wire, delta.hlc, delta.origin, delta.is_tombstone


class MemoryReplica:
    """One node's replicated state, kept in memory."""

    def __init__(self) -> None:
        self.rows: dict[RowKey, Delta] = {}
        """Each row's winning delta."""
        self.log: dict[NodeId, dict[int, Delta]] = {}
        """Every delta received, winning or not, by origin and stamp."""

    def version(self, key: RowKey) -> Version | None:
        winner = self.rows.get(key)
        return None if winner is None else winner.version

    def apply_deltas(self, deltas: Iterable[Delta]) -> None:
        """Merge each delta into its row in order, and log it (a delta already logged is ignored
        by the log, exactly as ``INSERT OR IGNORE`` does)."""
        for delta in deltas:
            key = (delta.table, delta.row_id)
            self.rows[key] = merge.merge_row(self.rows.get(key), delta)
            self.log.setdefault(delta.origin, {}).setdefault(delta.hlc, delta)
        self._erase_outdated()

    def _erase_outdated(self) -> None:
        """A nuke erases (storage/log/erase.py): every logged entry of a row that has a logged
        tombstone is kept at its place as a tombstone, without the words (a tombstone wins over
        every write of its row, sync/merge.py)."""
        dead = {
            (entry.table, entry.row_id)
            for entries in self.log.values()
            for entry in entries.values()
            if entry.is_tombstone
        }
        for entries in self.log.values():
            for hlc, entry in entries.items():
                if (entry.table, entry.row_id) in dead and not entry.is_tombstone:
                    entries[hlc] = Delta(entry.table, entry.row_id, hlc, entry.origin, None)

    def vector(self) -> VersionVector:
        return {origin: max(entries) for origin, entries in self.log.items() if entries}

    def changes_since(self, theirs: VersionVector, limit: int = MAX_PAGE_DELTAS) -> list[Page]:
        """Per origin (in order), a page of the entries above ``theirs``; ``limit`` in all."""
        pages = []
        budget = limit
        for origin, entries in sorted(self.log.items()):
            after = theirs.get(origin, 0)
            if max(entries) <= after or budget <= 0:
                continue
            fresh = tuple(entries[h] for h in sorted(entries) if h > after)[:budget]
            pages.append(Page(origin, after, fresh))
            budget -= len(fresh)
        return pages

    def apply_page(self, page: Page, *, now_ms: int, max_skew_ms: int) -> int:
        """Check every stamp's skew and that the page continues what is held, then merge."""
        page.check()
        for delta in page.deltas:
            check_skew(delta.hlc, now_ms, max_skew_ms)
        held = self.vector().get(page.origin, 0)
        if page.after > held:
            raise ProtocolError(f"page continues from {page.after}; only {held} is held")
        fresh = [d for d in page.deltas if d.hlc > held]
        self.apply_deltas(fresh)
        return len(fresh)

    def records(self) -> dict[RowKey, tuple[tuple[Value, ...], int, NodeId, bool]]:
        return {key: row_record(delta) for key, delta in self.rows.items()}
