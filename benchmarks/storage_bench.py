"""feral's storage against plain SQLite doing the same work, measured in one run (DESIGN §7).

Every figure comes from real SQLite files in one temporary directory, opened by
:func:`storage.connection.connect` (the same SQLite build and pragmas, ``synchronous=FULL``) on
both sides, so disk and CPU noise largely cancel in the ratios:

- ``write_overhead``: local writes through :func:`storage.memories.import_facts` (HLC stamping,
  LWW upsert, delta log, FTS) against plain inserts into a table of the same columns with the
  same FTS5 external-content index and triggers, in the same batches, one transaction each.
  ``write_overhead_single_row`` repeats it with one fact per transaction, where the fsync of
  every commit dominates both sides.
- ``merge_vs_plain``: a receiver's work for remote pages (``encode_page`` and ``decode_page``,
  then :func:`storage.delta_log.apply_page`, one transaction per page) into an empty store,
  against plain inserts of the same rows in the same batches.
- ``stale_vs_fresh``: the same pages applied again to the merged store, against the fresh merge.
- ``page_bytes_ratio``: the encoded pages' bytes against the plain msgpack of each row's values.
- ``catchup_vs_merge`` and ``wire_bytes_ratio``: from :mod:`benchmarks.catchup_bench`, a catch-up
  between real processes, its bytes counted on the socket.

Paired measurements run step by step in turn (a feral batch, then the plain batch, swapping which
goes first at each step), so a burst of disk or CPU contention falls on both sides alike.
"""

from __future__ import annotations

import os
import platform
import random
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypedDict

import msgpack

from storage.connection import Connection, connect, sqlite_version
from storage.delta_log import apply_page, changes_since
from storage.memories import Stamp, import_facts
from storage.store import open_sync, run_write
from sync.codec import decode_page, encode_page
from sync.delta import MAX_PAGE_DELTAS, Page
from sync.hlc import HybridClock
from sync.ids import fact_id
from sync.schema import Value
from sync.types import NodeId, VersionVector

__all__ = [
    "DEFAULT_ROWS",
    "GOALS",
    "QUICK_ROWS",
    "Goal",
    "Report",
    "make_triples",
    "render_table",
    "run",
]

DEFAULT_ROWS = 100_000
QUICK_ROWS = 20_000
BATCH = MAX_PAGE_DELTAS
"""Rows per transaction for batched writes: the size of a sync page, so both runs match."""
SINGLE_ROW_SHARE = 20
"""The single-row run writes ``rows // SINGLE_ROW_SHARE`` facts, one per transaction."""
MAX_SKEW_MS = 300_000
SEED = 7_2014
MIN_LEN, MAX_LEN = 5, 40

Triple = tuple[str, str, str]
PlainRow = tuple[Value, ...]


@dataclass(frozen=True)
class Goal:
    """A target for one ratio: ``at_most`` says whether lower is better."""

    ratio: str
    target: float
    at_most: bool

    def met(self, value: float) -> bool:
        return value <= self.target if self.at_most else value >= self.target

    def describe(self) -> str:
        return f"{'<=' if self.at_most else '>='} {self.target:g}"


GOALS: tuple[Goal, ...] = (
    Goal("write_overhead", 1.5, at_most=True),
    Goal("write_overhead_single_row", 1.5, at_most=True),
    Goal("merge_vs_plain", 0.6, at_most=False),
    Goal("stale_vs_fresh", 2.0, at_most=False),
    Goal("page_bytes_ratio", 1.3, at_most=True),
    Goal("wire_bytes_ratio", 1.3, at_most=True),
    Goal("catchup_vs_merge", 0.5, at_most=False),
    Goal("incremental_large_vs_small", 1.5, at_most=True),
)


class Report(TypedDict):
    machine: dict[str, Any]
    rows: int
    ratios: dict[str, float]
    absolute: dict[str, float]


# -- realistic facts -------------------------------------------------------------------------


def _pool(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split("|"))


# Each role: heads (what a phrase starts with) and tails (what may follow, to the target length).
_SUBJECTS = (
    _pool(
        "Maria Okafor|Priya|Dr. Chen|Grandma Ingrid|the Berlin office|project Halcyon|"
        "Kestrel release 3.2|my laptop|the team wiki|the kitchen router|our landlord|"
        "Jonas Rahman|Aisha|the billing service|Miso the cat|the old Volvo|Acme GmbH|"
        "the book club|Tomás Nakamura|the Lindqvists|my dentist|Sam's school|the NAS|"
        "the backend on-call|Uncle Femi|the allotment|Leipzig flat|the VPN"
    ),
    _pool(
        "at work|(sister)|from accounting|in Oslo|since 2021|'s phone|on staging|"
        "next door|the younger one|in the spring|for the move|at home|on weekends"
    ),
)
_PREDICATES = (
    _pool(
        "prefers|works at|lives in|is allergic to|owns|uses|depends on|was born in|moved to|"
        "usually orders|has a deadline on|reports to|meets with|speaks|likes|dislikes|"
        "was recommended|is scheduled for|runs on|costs|expires on|wants|is married to|"
        "plays|drives|reads|subscribes to|visited|is learning|manages"
    ),
    _pool(
        "every Friday|since 2019|at weekends|when travelling|in the morning|most days|"
        "for work|reluctantly|again|twice a week|according to Maria|by default"
    ),
)
_OBJECTS = (
    _pool(
        "oat milk flat white|Lisbon|penicillin|peanuts|PostgreSQL 16|Rust|the k8s cluster|"
        "a blue ceramic mug|Portuguese|Japanese jazz on vinyl|cilantro|a standing desk|"
        "€1,200 per month|the quarterly review|sourdough bread|hiking boots size 43|"
        "a window seat|green tea|Thursday at 14:00|Slack huddles|dark mode|Vim keybindings|"
        "Oslo|March 2024|the 7:40 train|Dr. Chen|Tuesday standups|an e-bike|SQLite"
    ),
    _pool(
        "and oat milk|with no sugar|in winter|on Fridays|v2|(confirmed)|before 9am|"
        "for the kids|over email|when it rains|at the latest|if possible|this quarter"
    ),
)


def _phrase(rng: random.Random, role: tuple[tuple[str, ...], tuple[str, ...]]) -> str:
    """A head and then tails, 5–40 characters in all, aiming at a length drawn uniformly."""
    heads, tails = role
    target = rng.randint(MIN_LEN, MAX_LEN)
    text = rng.choice(heads)
    while len(text) < target:
        tail = rng.choice(tails) if rng.random() < 0.8 else str(rng.randint(1, 9999))
        if len(text) + 1 + len(tail) > MAX_LEN:
            break
        text = f"{text} {tail}"
    return text


def make_triples(count: int, seed: int = SEED) -> list[Triple]:
    """``count`` distinct (by :func:`sync.ids.fact_id`) triples, the same for every seed."""
    rng = random.Random(seed)
    seen: set[str] = set()
    triples: list[Triple] = []
    while len(triples) < count:
        triple = (
            _phrase(rng, _SUBJECTS),
            _phrase(rng, _PREDICATES),
            _phrase(rng, _OBJECTS),
        )
        row_id = fact_id(*triple)
        if row_id not in seen:
            seen.add(row_id)
            triples.append(triple)
    return triples


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
    wire_bytes: int = 0
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
    t.wire_bytes = sum(len(encode_page(p)) for p in pages)
    t.raw_bytes = _raw_value_bytes(pages)


def _ratios(t: _Timings) -> dict[str, float]:
    return {
        "write_overhead": t.feral_write / t.plain_write,
        "write_overhead_single_row": t.feral_single / t.plain_single,
        "merge_vs_plain": t.plain_merge / t.merge,
        "stale_vs_fresh": t.merge / t.stale,
        "page_bytes_ratio": t.wire_bytes / t.raw_bytes,
    }


def _absolute(t: _Timings) -> dict[str, float]:
    return {
        "feral_write_rows_per_s": t.rows / t.feral_write,
        "plain_write_rows_per_s": t.rows / t.plain_write,
        "single_row_count": t.single_rows,
        "feral_single_row_rows_per_s": t.single_rows / t.feral_single,
        "plain_single_row_rows_per_s": t.single_rows / t.plain_single,
        "merge_rows_per_s": t.rows / t.merge,
        "plain_merge_rows_per_s": t.rows / t.plain_merge,
        "stale_merge_rows_per_s": t.rows / t.stale,
        "wire_bytes": t.wire_bytes,
        "raw_value_bytes": t.raw_bytes,
        "wire_bytes_per_row": t.wire_bytes / t.rows,
    }


def _machine() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "sqlite": sqlite_version(),
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
    }


def run(rows: int, seed: int = SEED) -> Report:
    """Run every measurement on ``rows`` facts in a fresh temporary directory."""
    rng = random.Random(seed)
    triples = make_triples(rows, seed)
    timings = _Timings(rows, max(1, rows // SINGLE_ROW_SHARE))
    with tempfile.TemporaryDirectory(prefix="feral-bench-") as name:
        _measure_writes(Path(name), triples, _node_id(rng), timings)
        _measure_merge(Path(name), timings)
    ratios, absolute = _ratios(timings), _absolute(timings)
    from .catchup_bench import run_catchup  # it builds on this module's fact generator

    catchup = run_catchup(rows)
    from .incremental_bench import incremental_seconds

    large_rows = 1_000_000 if rows >= DEFAULT_ROWS else 100_000
    small, large = incremental_seconds(10_000), incremental_seconds(large_rows)
    ratios["incremental_large_vs_small"] = large / small
    absolute.update(
        {"incremental_100_at_10k_s": small, f"incremental_100_at_{large_rows // 1000}k_s": large}
    )
    ratios["wire_bytes_ratio"] = catchup.pop("wire_bytes_ratio")
    ratios["catchup_vs_merge"] = catchup.pop("catchup_vs_merge")
    absolute.update({k: v for k, v in catchup.items() if k != "rows"})
    return Report(machine=_machine(), rows=rows, ratios=ratios, absolute=absolute)


# -- output ----------------------------------------------------------------------------------


def _format(value: float) -> str:
    return f"{value:,.0f}" if isinstance(value, int) or value >= 100 else f"{value:,.2f}"


def render_table(report: Report) -> str:
    """The report as a readable table: each ratio with its goal and whether it is met."""
    m = report["machine"]
    lines = [
        f"feral storage benchmark: {report['rows']:,} rows, batches of {BATCH:,}, "
        "synchronous=FULL on both sides",
        f"Python {m['python']}, SQLite {m['sqlite']}, {m['cpu_count']} CPUs, {m['platform']}",
        "",
        f"{'ratio':<28}{'value':>8}  {'goal':<8}  result",
    ]
    for goal in GOALS:
        value = report["ratios"][goal.ratio]
        verdict = "met" if goal.met(value) else "NOT MET"
        lines.append(f"{goal.ratio:<28}{value:>8.2f}  {goal.describe():<8}  {verdict}")
    lines += [
        "(single_row: one fact per transaction; the fsync of every commit dominates both sides)",
        "",
        f"{'absolute':<28}{'value':>12}",
    ]
    lines += [f"{key:<28}{_format(v):>12}" for key, v in report["absolute"].items()]
    return "\n".join(lines)
