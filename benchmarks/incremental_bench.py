"""Incremental sync cost against database size: it must depend on the change, not the history.

Two stores hold the same N facts (the second is a copy of the first, so both hold the same log).
The first then takes 100 new writes, and the time for the second to catch up through the real
answer/receive path (pages encoded and decoded as on the wire) is measured. The ratio compares a
large database with a small one; a cursor that scanned the log would grow with N.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from pathlib import Path

from feral.storage.db.connection import Connection
from feral.storage.log.delta_log import answer_request, apply_page, version_vector
from feral.storage.memory.memories import import_facts
from feral.storage.store import open_sync, run_write
from feral.sync.codec import decode_page, encode_page
from feral.sync.hlc import HybridClock
from feral.sync.types import NodeId

from .corpus import make_triples

__all__ = ["incremental_seconds"]

ORIGIN = NodeId("a" * 32)
CHANGES = 100
REPEATS = 9
BATCH = 5_000


def _now() -> int:
    return time.time_ns() // 1_000_000


def _build(path: Path, rows: int) -> HybridClock:
    conn = open_sync(path, synchronous="NORMAL")  # building only; the timed part uses FULL
    clock = HybridClock(ORIGIN, _now)
    triples = make_triples(rows)
    for start in range(0, rows, BATCH):
        run_write(conn, import_facts, ORIGIN, clock.tick, triples[start : start + BATCH], now_ms=1)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return clock


def _catch_up(sender: Connection, receiver: Connection) -> int:
    moved = 0
    while True:
        pages, _ = answer_request(sender, version_vector(receiver), 1000)
        if not pages:
            break
        for page in pages:
            moved += run_write(
                receiver, apply_page, decode_page(encode_page(page)),
                now_ms=_now(), max_skew_ms=300_000, checked=True,
            )  # fmt: skip
    return moved


def _one_round(sender: Connection, receiver: Connection, clock: HybridClock, round_: int) -> float:
    """Connections stay open across rounds, as a serving node keeps its own."""
    fresh = [(f"round {round_}", "change", f"value {i}") for i in range(CHANGES)]
    run_write(sender, import_facts, ORIGIN, clock.tick, fresh, now_ms=_now())
    started = time.perf_counter()
    moved = _catch_up(sender, receiver)
    elapsed = time.perf_counter() - started
    if moved != CHANGES:
        raise RuntimeError(f"expected {CHANGES} rows to move, moved {moved}")
    return elapsed


def incremental_seconds(rows: int) -> float:
    """Median seconds for a copy of an ``rows``-fact database to take 100 new changes."""
    with tempfile.TemporaryDirectory(prefix="feral-incremental-") as tmp:
        sender, receiver = Path(tmp) / "a.db", Path(tmp) / "b.db"
        clock = _build(sender, rows)
        shutil.copy(sender, receiver)
        a, b = open_sync(sender), open_sync(receiver)
        try:
            times = [_one_round(a, b, clock, r) for r in range(REPEATS)]
        finally:
            a.close()
            b.close()
    return statistics.median(times)
