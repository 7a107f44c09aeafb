"""Helpers shared by the storage tests: replicas on real files, manual clocks, a pull-based
exchange through ``changes_since`` + ``apply_page``, and the convergence and LWW oracles.

Nothing here mocks SQLite: every replica is a real database opened with ``open_sync``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from feral.storage.db.connection import Connection
from feral.storage.log.delta_log import apply_page, changes_since, clock_high_water, version_vector
from feral.storage.memory.export import export_lines, state_digest
from feral.storage.memory.memories import (
    add_episode,
    log_execution,
    nuke,
    remember_fact,
    set_archived,
)
from feral.storage.store import open_sync, run_write
from feral.sync.delta import MAX_PAGE_DELTAS, Delta, Page
from feral.sync.hlc import HybridClock
from feral.sync.ids import new_ulid
from feral.sync.schema import TABLES
from feral.sync.types import NodeId, RowId, VersionVector

__all__ = [
    "A",
    "B",
    "C",
    "T0",
    "WINDOW_MS",
    "ManualClock",
    "Replica",
    "all_deltas",
    "assert_converged",
    "assert_lww_winners",
    "assert_unchanged",
    "export_text",
    "page_stream",
    "pull",
    "snapshot",
    "sync_until_quiet",
]

A = NodeId("a" * 32)
B = NodeId("b" * 32)
C = NodeId("c" * 32)
T0 = 1_700_000_000_000
"""A fixed start time (ms) for manual clocks."""
WINDOW_MS = 300_000
"""The skew window used by the exchange helpers (FERAL's 5 minutes)."""


class ManualClock:
    """A physical clock that moves only when told to."""

    def __init__(self, start: int = T0) -> None:
        self.now = start

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int = 1) -> int:
        self.now += ms
        return self.now


@dataclass
class Replica:
    """One node's store on a real file, with its own manual clock and HLC."""

    name: str
    conn: Connection
    node_id: NodeId
    time: ManualClock
    clock: HybridClock
    serial: itertools.count[int] = field(default_factory=itertools.count)

    @classmethod
    def open(
        cls, directory: Path, name: str, node_id: NodeId, start: int = T0, **kwargs: Any
    ) -> Replica:
        time = ManualClock(start)
        conn = open_sync(directory / f"{name}.db", **kwargs)
        return cls(name, conn, node_id, time, HybridClock(node_id, time))

    def close(self) -> None:
        self.conn.close()

    def _next_id(self) -> RowId:
        n = next(self.serial)
        return new_ulid(self.time(), self.node_id[:2].encode() + n.to_bytes(8, "big"))

    def remember(self, subject: str, predicate: str, obj: str, confidence: float = 1.0) -> dict:
        self.time.advance()
        return run_write(
            self.conn,
            remember_fact,
            self.node_id,
            self.clock.tick,
            (subject, predicate, obj),
            now_ms=self.time(),
            confidence=confidence,
        )

    def episode(self, summary: str, entities: Sequence[str] = ()) -> dict:
        self.time.advance()
        return run_write(
            self.conn,
            add_episode,
            self.node_id,
            self.clock.tick,
            self._next_id(),
            session_id=f"session-{self.node_id[:4]}",
            summary=summary,
            entities=list(entities),
            now_ms=self.time(),
        )

    def execution(self, tool: str = "search") -> dict:
        self.time.advance()
        return run_write(
            self.conn,
            log_execution,
            self.node_id,
            self.clock.tick,
            self._next_id(),
            session_id=f"session-{self.node_id[:4]}",
            tool=tool,
            args={"q": tool},
            result={"ok": True},
            latency_ms=12,
            success=True,
            now_ms=self.time(),
        )

    def archive(self, row_id: str, archived: bool = True) -> dict:
        self.time.advance()
        return run_write(self.conn, set_archived, self.node_id, self.clock.tick, row_id, archived)

    def restore(self, row_id: str) -> dict:
        return self.archive(row_id, archived=False)

    def nuke(self, row_id: str) -> dict:
        self.time.advance()
        return run_write(self.conn, nuke, self.node_id, self.clock.tick, row_id)

    def apply(self, page: Page, max_skew_ms: int = WINDOW_MS) -> int:
        return run_write(self.conn, apply_page, page, now_ms=self.time(), max_skew_ms=max_skew_ms)


def all_deltas(conn: Connection) -> list[Delta]:
    """Every log entry held by ``conn``, read back through ``changes_since`` from nothing."""
    return [d for page in page_stream(conn, {}, MAX_PAGE_DELTAS) for d in page.deltas]


def page_stream(conn: Connection, theirs: VersionVector, limit: int) -> list[Page]:
    """All the pages a peer holding ``theirs`` would be sent, as if it applied each in turn."""
    vector = dict(theirs)
    stream: list[Page] = []
    while pages := changes_since(conn, vector, limit):
        for page in pages:
            stream.append(page)
            vector[page.origin] = page.last_hlc
    return stream


def pull(receiver: Replica, sender: Replica, limit: int = 2) -> int:
    """One request: the receiver sends its vector, applies every page it gets back in order.

    Returns:
        How many pages were received.
    """
    pages = changes_since(sender.conn, version_vector(receiver.conn), limit)
    for page in pages:
        receiver.apply(page)
    return len(pages)


def sync_until_quiet(
    links: Iterable[tuple[Replica, Replica]], limit: int = 2, max_rounds: int = 200
) -> int:
    """Pull both ways over every link until a whole round moves nothing; fail if it never ends.

    Returns:
        The number of rounds that moved something.
    """
    links = list(links)
    for round_no in range(max_rounds):
        moved = 0
        for x, y in links:
            moved += pull(x, y, limit) + pull(y, x, limit)
        if not moved:
            return round_no
    raise AssertionError(f"no quiescence after {max_rounds} rounds")


def export_text(conn: Connection) -> str:
    return "".join(export_lines(conn))


def snapshot(conn: Connection) -> tuple[Any, ...]:
    """Everything a refused page must leave alone: schema, rows, log, vector, clock."""
    return (
        conn.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name"
        ).fetchall(),
        export_text(conn),
        conn.execute(
            "SELECT origin, hlc, tbl, row_id, payload FROM delta_log ORDER BY 1, 2"
        ).fetchall(),
        version_vector(conn),
        clock_high_water(conn),
    )


def assert_unchanged(before: tuple[Any, ...], conn: Connection) -> None:
    after = snapshot(conn)
    labels = ("sqlite_master", "export", "delta_log", "version_vector", "clock_high_water")
    for label, old, new in zip(labels, before, after, strict=True):
        assert old == new, f"{label} changed"


def assert_converged(*replicas: Replica) -> None:
    """Byte-identical exports and equal digests on every replica."""
    first = replicas[0]
    text = export_text(first.conn)
    for other in replicas[1:]:
        assert export_text(other.conn) == text, f"{first.name} and {other.name} differ"
        assert state_digest(other.conn) == state_digest(first.conn)
    assert len({frozenset(version_vector(r.conn).items()) for r in replicas}) == 1


def assert_lww_winners(replica: Replica, written: Iterable[Delta]) -> None:
    """Every row holds the greatest ``(hlc, origin)`` delta written for its id, as a tombstone
    if any write of it was one (a nuke wins, sync/merge.py), and no row exists that nobody
    wrote."""
    winners: dict[tuple[str, str], Delta] = {}
    nuked: set[tuple[str, str]] = set()
    for delta in written:
        key = (delta.table, delta.row_id)
        if key not in winners or delta.version > winners[key].version:
            winners[key] = delta
        if delta.is_tombstone:
            nuked.add(key)
    for key in nuked:
        top = winners[key]
        winners[key] = Delta(top.table, top.row_id, top.hlc, top.origin, None)
    rows = {}
    for line in export_lines(replica.conn):
        row = json.loads(line)
        rows[(row["table"], row["id"])] = row
    assert rows.keys() == winners.keys()
    for key, delta in winners.items():
        row = rows[key]
        table = next(t for t in TABLES if t.name == delta.table)
        assert tuple(row[n] for n in table.column_names) == delta.row_values(), key
        assert (row["hlc"], row["origin"], row["deleted"]) == (
            delta.hlc,
            delta.origin,
            delta.is_tombstone,
        ), key
