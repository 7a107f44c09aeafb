"""feral's storage against plain SQLite doing the same work, measured in one run (DESIGN §7).

Every figure comes from real SQLite files in one temporary directory, opened by
:func:`feral.storage.db.connection.connect` (the same SQLite build and pragmas,
``synchronous=FULL``) on both sides, so disk and CPU noise largely cancel in the ratios:

- ``write_overhead``: local writes through :func:`feral.storage.memory.memories.import_facts` (HLC
  stamping, LWW upsert, delta log, FTS) against plain inserts into a table of the same columns with
  the same FTS5 external-content index and triggers, in the same batches, one transaction each.
  ``write_overhead_single_row`` repeats it with one fact per transaction, where the fsync of
  every commit dominates both sides.
- ``merge_vs_plain``: a receiver's work for remote pages (``encode_page`` and ``decode_page``,
  then :func:`feral.storage.log.delta_log.apply_page`, one transaction per page) into an empty
  store, against plain inserts of the same rows in the same batches.
- ``stale_vs_fresh``: the same pages applied again to the merged store, against the fresh merge.
- ``page_bytes_ratio``: the encoded pages' bytes against the plain msgpack of each row's values
  (the catch-up benchmark measures the same on a real socket, framing included).

Paired measurements run step by step in turn (a feral batch, then the plain batch, swapping which
goes first at each step), so a burst of disk or CPU contention falls on both sides alike.
"""

from __future__ import annotations

import random
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import msgpack

from feral.storage.db.connection import Connection, connect
from feral.storage.log.delta_log import apply_page, changes_since
from feral.storage.memory.memories import Stamp, import_facts
from feral.storage.store import open_sync, run_write
from feral.sync.codec import decode_page, encode_page
from feral.sync.delta import MAX_PAGE_DELTAS, Page
from feral.sync.hlc import HybridClock
from feral.sync.ids import fact_id
from feral.sync.schema import Value
from feral.sync.types import NodeId, VersionVector

from .corpus import SEED, Triple, make_triples

__all__ = ["BATCH", "run_storage"]

BATCH = MAX_PAGE_DELTAS
"""Rows per transaction for batched writes: the size of a sync page, so both runs match."""
SINGLE_ROW_SHARE = 20
"""The single-row run writes ``rows // SINGLE_ROW_SHARE`` facts, one per transaction."""
MAX_SKEW_MS = 300_000

PlainRow = tuple[Value, ...]


def _node_id(rng: random.Random) -> NodeId:
    return NodeId("".join(rng.choice("abcdefghijklmnopqrstuvwxyz234567") for _ in range(32)))


def _plain_rows(triples: Sequence[Triple], created_at: int) -> list[PlainRow]:
    """The rows :func:`import_facts` stores, for the plain side (ids computed untimed)."""
    return [(fact_id(s, p, o), s, p, o, 1.0, None, created_at, 0) for s, p, o in triples]


def _chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _wall_ms() -> int:
    return time.time_ns() // 1_000_000


# -- plain SQLite ----------------------------------------------------------------------------

_PLAIN_DDL = (
    "CREATE TABLE facts (id TEXT PRIMARY KEY NOT NULL, subject TEXT NOT NULL, "
    "predicate TEXT NOT NULL, object TEXT NOT NULL, confidence REAL NOT NULL, "
    "source_episode TEXT, created_at INTEGER NOT NULL, archived INTEGER NOT NULL) STRICT",
    "CREATE VIRTUAL TABLE facts_fts USING fts5(subject, predicate, object, "
    "content='facts', content_rowid='rowid')",
    "CREATE TRIGGER facts_ai AFTER INSERT ON facts BEGIN INSERT INTO facts_fts"
    "(rowid, subject, predicate, object) VALUES (new.rowid, new.subject, new.predicate, "
    "new.object); END",
    "CREATE TRIGGER facts_ad AFTER DELETE ON facts BEGIN INSERT INTO facts_fts"
    "(facts_fts, rowid, subject, predicate, object) VALUES ('delete', old.rowid, old.subject, "
    "old.predicate, old.object); END",
    "CREATE TRIGGER facts_au AFTER UPDATE ON facts BEGIN INSERT INTO facts_fts"
    "(facts_fts, rowid, subject, predicate, object) VALUES ('delete', old.rowid, old.subject, "
    "old.predicate, old.object); INSERT INTO facts_fts(rowid, subject, predicate, object) "
    "VALUES (new.rowid, new.subject, new.predicate, new.object); END",
)
_PLAIN_INSERT = "INSERT INTO facts VALUES (?, ?, ?, ?, ?, ?, ?, ?)"


def _open_plain(path: Path) -> Connection:
    """A plain database: the facts table and its FTS5 index as migration 0002 makes them."""
    conn = connect(path)
    for statement in _PLAIN_DDL:
        conn.execute(statement)
    return conn


def _plain_batch(conn: Connection, rows: Sequence[PlainRow]) -> None:
    """Plain SQLite's work for a batch: one transaction, one prepared insert per row."""
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany(_PLAIN_INSERT, rows)
    conn.execute("COMMIT")


def _page_rows(page: Page) -> list[PlainRow]:
    """A page's rows as plain SQLite stores them (bools as integers)."""
    return [
        tuple(int(v) if isinstance(v, bool) else v for v in d.values)
        for d in page.deltas
        if d.values is not None
    ]


def _expect_rows(conn: Connection, table: str, expected: int) -> None:
    (count,) = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
    if count != expected:
        raise RuntimeError(f"{table} holds {count} rows, expected {expected}")


# -- feral -----------------------------------------------------------------------------------


def _feral_batch(conn: Connection, origin: NodeId, stamp: Stamp, triples: Sequence[Triple]) -> None:
    """feral's work for a batch of local writes: one ``run_write`` of ``import_facts``."""
    run_write(conn, import_facts, origin, stamp, triples, now_ms=_wall_ms())


def _receive(conn: Connection, page: Page) -> int:
    """A receiver's work for a page (encoding stands in for the frame it reads): decode, apply."""
    received = decode_page(encode_page(page))
    applied: int = run_write(
        conn, apply_page, received, now_ms=_wall_ms(), max_skew_ms=MAX_SKEW_MS, checked=True
    )
    return applied


def _read_pages(conn: Connection) -> list[Page]:
    """Everything in ``conn``'s log, as an empty peer would receive it (untimed: sender's work)."""
    theirs: VersionVector = {}
    pages: list[Page] = []
    while batch := changes_since(conn, theirs, MAX_PAGE_DELTAS):
        for page in batch:
            theirs[page.origin] = page.last_hlc
            pages.append(page)
    return pages


def _raw_value_bytes(pages: Sequence[Page]) -> int:
    """The baseline for the wire: each row's values as one plain msgpack array."""
    return sum(
        len(msgpack.packb(list(d.values))) for p in pages for d in p.deltas if d.values is not None
    )


# -- the run ---------------------------------------------------------------------------------

Step = Callable[[], object]


def _alternate(a: Sequence[Step], b: Sequence[Step]) -> tuple[float, float]:
    """Run ``a[i]`` and ``b[i]`` in turn, swapping which goes first at each step, so both sides
    meet the same disk and CPU weather; returns each side's total seconds."""
    totals = [0.0, 0.0]
    steps = (a, b)
    for i in range(len(a)):
        for side in (i % 2, 1 - i % 2):
            start = time.perf_counter()
            steps[side][i]()
            totals[side] += time.perf_counter() - start
    return totals[0], totals[1]


@dataclass
class _Timings:
    """Seconds (and bytes) measured in one run."""

    rows: int
    single_rows: int
    feral_write: float = 0.0
    plain_write: float = 0.0
    feral_single: float = 0.0
    plain_single: float = 0.0
    merge: float = 0.0
    plain_merge: float = 0.0
    stale: float = 0.0
    page_bytes: int = 0
    raw_bytes: int = 0


def _compare_writes(
    tmp: Path, name: str, triples: Sequence[Triple], size: int, origin: NodeId
) -> tuple[float, float]:
    """(feral, plain) seconds to write ``triples``, ``size`` per transaction, into new files."""
    rows = _plain_rows(triples, _wall_ms())
    clock = HybridClock(origin, _wall_ms)
    with (
        closing(open_sync(tmp / f"feral_{name}.db")) as feral,
        closing(_open_plain(tmp / f"plain_{name}.db")) as plain,
    ):
        timings = _alternate(
            [partial(_feral_batch, feral, origin, clock.tick, b) for b in _chunks(triples, size)],
            [partial(_plain_batch, plain, b) for b in _chunks(rows, size)],
        )
        _expect_rows(feral, "facts", len(triples))
        _expect_rows(plain, "facts", len(rows))
    return timings


def _measure_writes(tmp: Path, triples: Sequence[Triple], origin: NodeId, t: _Timings) -> None:
    t.feral_write, t.plain_write = _compare_writes(tmp, "batch", triples, BATCH, origin)
    single = triples[: t.single_rows]
    t.feral_single, t.plain_single = _compare_writes(tmp, "single", single, 1, origin)


def _measure_merge(tmp: Path, t: _Timings) -> None:
    with closing(open_sync(tmp / "feral_batch.db")) as source:
        pages = _read_pages(source)
    with (
        closing(open_sync(tmp / "feral_merge.db")) as feral,
        closing(_open_plain(tmp / "plain_merge.db")) as plain,
    ):
        t.merge, t.plain_merge = _alternate(
            [partial(_receive, feral, p) for p in pages],
            [partial(_plain_batch, plain, _page_rows(p)) for p in pages],
        )
        _expect_rows(feral, "facts", t.rows)
        _expect_rows(plain, "facts", t.rows)
        start = time.perf_counter()
        stale_applied = sum(_receive(feral, p) for p in pages)
        t.stale = time.perf_counter() - start
        if stale_applied:
            raise RuntimeError(f"re-applied pages wrote {stale_applied} deltas, expected none")
    t.page_bytes = sum(len(encode_page(p)) for p in pages)
    t.raw_bytes = _raw_value_bytes(pages)


def _figures(t: _Timings) -> dict[str, float]:
    return {
        "write_overhead": t.feral_write / t.plain_write,
        "write_overhead_single_row": t.feral_single / t.plain_single,
        "merge_vs_plain": t.plain_merge / t.merge,
        "stale_vs_fresh": t.merge / t.stale,
        "page_bytes_ratio": t.page_bytes / t.raw_bytes,
        "feral_write_rows_per_s": t.rows / t.feral_write,
        "plain_write_rows_per_s": t.rows / t.plain_write,
        "single_row_count": t.single_rows,
        "feral_single_row_rows_per_s": t.single_rows / t.feral_single,
        "plain_single_row_rows_per_s": t.single_rows / t.plain_single,
        "merge_rows_per_s": t.rows / t.merge,
        "plain_merge_rows_per_s": t.rows / t.plain_merge,
        "stale_merge_rows_per_s": t.rows / t.stale,
        "page_bytes": t.page_bytes,
        "page_raw_value_bytes": t.raw_bytes,
        "page_bytes_per_row": t.page_bytes / t.rows,
    }


def run_storage(rows: int, seed: int = SEED) -> dict[str, float]:
    """Write, merge and re-merge ``rows`` facts on both sides in a fresh temporary directory;
    returns every ratio and absolute figure by name (the report sorts them into sections)."""
    rng = random.Random(seed)
    triples = make_triples(rows, seed)
    timings = _Timings(rows, max(1, rows // SINGLE_ROW_SHARE))
    with tempfile.TemporaryDirectory(prefix="feral-bench-") as name:
        _measure_writes(Path(name), triples, _node_id(rng), timings)
        _measure_merge(Path(name), timings)
    return _figures(timings)
