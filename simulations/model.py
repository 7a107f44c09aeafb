"""The oracle: every write committed anywhere, and what a replica must hold because of it.

:class:`Ledger` records each delta a node commits locally (read back from its log right after
the commit). The winner of a row is the delta with the greatest ``(hlc, origin)`` among all of
them (TEST-CATALOG "LWW-correct"), made a tombstone if any of them is one (a nuke wins over every
write of its row, docs/REPLICATION.md §3), computed here with plain tuple comparison, independently
of :mod:`feral.sync.merge`, so a broken ``merge_row()`` cannot hide itself.

The readers below look at a node's database directly (its rows and its log's stamps): they are
the oracle's eyes, not a code path the product uses.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from feral.storage.db import opaque
from feral.storage.memory.memories import select_sql
from feral.sync.delta import Delta
from feral.sync.schema import TABLES, Value
from feral.sync.types import NodeId, RowId

from .replica import RowKey, row_record

__all__ = [
    "Ledger",
    "Record",
    "SimulationError",
    "log_stamps",
    "log_summary",
    "store_records",
    "words_kept_after_nuke",
]

Record = tuple[tuple[Value, ...], int, NodeId, bool]
"""A row as the oracle compares it: values in column order, hlc, origin, deleted."""

Conn = Any


class SimulationError(AssertionError):
    """An oracle found the system wrong, or sync did not go quiet (or spun) within its bound."""


class Ledger:
    """Every committed write, by origin and stamp, and the problems seen while recording."""

    def __init__(self) -> None:
        self.entries: dict[NodeId, dict[int, Delta]] = {}
        self.problems: list[str] = []
        self.lost = 0
        """Writes that existed on no node any more after a restore from backup (by design)."""
        self.rows_only: set[tuple[NodeId, int]] = set()
        """Writes that, after a restore, some node held as a row and none in its log (a
        snapshot whose final page never came): they survive, and no log will hold them."""

    def record(self, deltas: Iterable[Delta]) -> None:
        for delta in deltas:
            mine = self.entries.setdefault(delta.origin, {})
            known = mine.get(delta.hlc)
            if known is not None and known != delta:
                self.problems.append(
                    f"{delta.origin[:6]} stamped two different writes {delta.hlc}: "
                    f"{known.row_id} and {delta.row_id}"
                )
            mine.setdefault(delta.hlc, delta)

    def stamps(self, origin: NodeId) -> list[int]:
        return sorted(self.entries.get(origin, {}))

    def all_stamps(self) -> set[tuple[NodeId, int]]:
        return {(origin, hlc) for origin, mine in self.entries.items() for hlc in mine}

    def keep_only(self, surviving: set[tuple[NodeId, int]]) -> None:
        """Forget the writes no node holds any more (a restore from backup lost them)."""
        for origin, mine in self.entries.items():
            for hlc in [h for h in mine if (origin, h) not in surviving]:
                del mine[hlc]
                self.lost += 1

    def winners(self) -> dict[RowKey, Delta]:
        best: dict[RowKey, Delta] = {}
        nuked: set[RowKey] = set()
        for mine in self.entries.values():
            for delta in mine.values():
                key = (delta.table, delta.row_id)
                current = best.get(key)
                if current is None or (delta.hlc, delta.origin) > (current.hlc, current.origin):
                    best[key] = delta
                if delta.values is None:
                    nuked.add(key)
        for key in nuked:
            top = best[key]
            best[key] = Delta(top.table, top.row_id, top.hlc, top.origin, None)
        return best

    def expected(self) -> dict[RowKey, Record]:
        return {key: row_record(delta) for key, delta in self.winners().items()}


def store_records(conn: Conn) -> dict[RowKey, Record]:
    """Every replicated row of a SQLite node, tombstones included, in the oracle's form."""
    records: dict[RowKey, Record] = {}
    for table in TABLES:
        kinds = [column.kind for column in table.columns]
        query = select_sql(table).replace(" FROM ", ", opaque FROM ", 1)
        for *values, hlc, origin, deleted, unknown in conn.execute(query):
            typed = [
                bool(v) if kind == "bool" else v for kind, v in zip(kinds, values, strict=True)
            ]
            wire = tuple(opaque.wire_values(table, typed, unknown))  # sync/unknown.py
            records[(table.name, RowId(values[0]))] = (wire, hlc, NodeId(origin), bool(deleted))
    return records


def log_stamps(conn: Conn) -> dict[NodeId, list[int]]:
    """The stamps a node's delta log holds, by origin, in order."""
    stamps: dict[NodeId, list[int]] = {}
    for origin, hlc in conn.execute("SELECT origin, hlc FROM delta_log ORDER BY origin, hlc"):
        stamps.setdefault(NodeId(origin), []).append(hlc)
    return stamps


def log_summary(conn: Conn) -> dict[NodeId, tuple[int, int]]:
    """For each origin in a node's delta log: how many entries it holds, and the newest stamp."""
    return {
        NodeId(origin): (count, top)
        for origin, count, top in conn.execute(
            "SELECT origin, count(*), max(hlc) FROM delta_log GROUP BY origin"
        )
    }


def words_kept_after_nuke(conn: Conn) -> int:
    """How many log entries still hold a payload although their row's log holds an entry
    without one (a tombstone, or an entry a tombstone erased).

    A nuke erases (storage/log/erase.py): on every node, at every step, every entry of a row with
    a logged tombstone has no payload, even one a device that had not heard of the nuke wrote
    later (the tombstone wins over it), so no node can send a nuked row's words to anyone, a
    device that joins later included.
    """
    (count,) = conn.execute(
        "SELECT count(*) FROM delta_log AS d WHERE d.payload IS NOT NULL AND EXISTS ("
        "SELECT 1 FROM delta_log AS t WHERE t.tbl = d.tbl AND t.row_id = d.row_id "
        "AND t.payload IS NULL)"
    ).fetchone()
    return int(count)
