"""Differential: the SQLite store against the in-memory reference replica (DESIGN §4, §7).

The same deltas, in the same orders, go into storage/log/delta_log.py (guarded SQL upserts, the
log, the vector) and into :class:`simulations.replica.MemoryReplica` (``sync.merge.decide``
over dictionaries). After every step both must hold the same rows, versions, logs and vectors,
refuse the same pages, and answer the same catch-up requests with the same pages.

Stamps are drawn from a handful of milliseconds and counters, so equal HLCs from different
origins (the node-id tie-break), tombstones against writes at equal stamps, and deltas that
arrive out of order or twice are all common. Each ``(origin, hlc)`` names one write only, as in
the product (a node never stamps two writes alike).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    MultipleResults,
    RuleBasedStateMachine,
    invariant,
    multiple,
    rule,
)

from feral.storage.db.connection import Connection
from feral.storage.log import delta_log
from feral.storage.store import open_sync, run_write
from feral.sync.delta import Delta, Page
from feral.sync.errors import FeralError
from feral.sync.hlc import pack
from feral.sync.schema import EPISODES, FACTS
from feral.sync.types import NodeId, RowId

from .cluster import scratch_directory, template_database
from .keys import FakeKeys
from .model import log_stamps, store_records
from .network import EPOCH_MS
from .profiles import TOTALS, pytest_settings
from .replica import MemoryReplica
from .simnode import MAX_SKEW_MS

__all__ = ["StoreAgreementMachine"]

_KEYS = FakeKeys()
ORIGINS: tuple[NodeId, ...] = tuple(_KEYS.new(name).node_id for name in ("a", "b", "c"))
LOCAL: NodeId = _KEYS.new("local").node_id
WALL_STEP_MS = 200_000
"""Stamps sit 0, 200, 400 or 600 s after the epoch, so a receiver at the epoch refuses some."""


tables = st.sampled_from([FACTS.name, EPISODES.name])
texts = st.sampled_from(["tea", "coffee"])


def stamp(wall: int, counter: int) -> int:
    return pack(EPOCH_MS + wall * WALL_STEP_MS, counter)


def _values(table: str, row_id: RowId, text: str, flag: bool) -> tuple[Any, ...]:
    if table == FACTS.name:
        return (row_id, "alice", "likes", text, 0.5 if flag else 1.0, None, EPOCH_MS, flag)
    return (row_id, "session", text, "[]", EPOCH_MS, flag)


class StoreAgreementMachine(RuleBasedStateMachine):
    """One SQLite store and one reference replica, fed identically."""

    deltas = Bundle("deltas")

    def __init__(self) -> None:
        super().__init__()
        self.directory = Path(tempfile.mkdtemp(prefix="feral-agree-", dir=scratch_directory()))
        self.path = self.directory / "store.db"
        shutil.copyfile(template_database(), self.path)
        self.conn: Connection = open_sync(self.path, synchronous="NORMAL")
        self.replica = MemoryReplica()
        self.made: dict[tuple[NodeId, int], Delta] = {}
        TOTALS["examples"] += 1
        TOTALS["nodes"] += 1

    def _delta(self, origin: NodeId, hlc: int, table: str, row: int, tombstone: bool,
               text: str) -> Delta:  # fmt: skip
        known = self.made.get((origin, hlc))
        if known is not None:
            return known  # one stamp, one write
        row_id = RowId(f"row{row}")
        values = None if tombstone else _values(table, row_id, text, text == "tea")
        delta = Delta(table, row_id, hlc, origin, values)
        self.made[(origin, hlc)] = delta
        return delta

    @rule(
        target=deltas,
        origin=st.sampled_from(ORIGINS),
        wall=st.integers(0, 3),
        counter=st.integers(0, 1),
        table=tables,
        row=st.integers(0, 2),
        tombstone=st.booleans(),
        text=texts,
    )
    def new_delta(self, origin: NodeId, wall: int, counter: int, table: str, row: int,
                  tombstone: bool, text: str) -> Delta:  # fmt: skip
        return self._delta(origin, stamp(wall, counter), table, row, tombstone, text)

    @rule(
        target=deltas,
        origins=st.permutations(ORIGINS),
        wall=st.integers(0, 3),
        table=tables,
        row=st.integers(0, 2),
        tombstones=st.tuples(st.booleans(), st.booleans()),
        text=texts,
    )
    def tie(self, origins: list[NodeId], wall: int, table: str, row: int,
            tombstones: tuple[bool, bool], text: str) -> MultipleResults[Delta]:  # fmt: skip
        """TEST-CATALOG 2 and 3: two origins write one row at one HLC (either may be a delete)
        and the writes arrive one after the other, in the drawn order."""
        hlc = stamp(wall, 0)
        pair = [
            self._delta(origin, hlc, table, row, tombstone, text)
            for origin, tombstone in zip(origins[:2], tombstones, strict=True)
        ]
        for delta in pair:
            run_write(self.conn, delta_log.apply_deltas, [delta])
            self.replica.apply_deltas([delta])
        return multiple(*pair)

    @rule(batch=st.lists(deltas, min_size=1, max_size=6))
    def apply_batch(self, batch: list[Delta]) -> None:
        """Local commits and merges go through ``apply_deltas``: any order, repeats allowed."""
        run_write(self.conn, delta_log.apply_deltas, batch)
        self.replica.apply_deltas(batch)

    @rule(
        origin=st.sampled_from(ORIGINS),
        start=st.integers(0, 12),
        size=st.integers(1, 4),
        now=st.sampled_from([EPOCH_MS, EPOCH_MS + 10 * WALL_STEP_MS]),
    )
    def receive_page(self, origin: NodeId, start: int, size: int, now: int) -> None:
        """A page of one origin's writes, in order from some cursor: both accept or refuse."""
        stamps = sorted(h for o, h in self.made if o == origin)
        after = ([0, *stamps])[min(start, len(stamps))]
        deltas = tuple(self.made[(origin, h)] for h in stamps if h > after)[:size]
        page = Page(origin, after, deltas)
        outcomes: list[int | str] = []
        for apply in (self._store_page, self._replica_page):
            try:
                outcomes.append(apply(page, now))
            except FeralError as exc:
                outcomes.append(type(exc).__name__)
        assert outcomes[0] == outcomes[1], f"store {outcomes[0]!r}, replica {outcomes[1]!r}"

    def _store_page(self, page: Page, now: int) -> int:
        return int(run_write(self.conn, delta_log.apply_page, page, now_ms=now,
                             max_skew_ms=MAX_SKEW_MS))  # fmt: skip

    def _replica_page(self, page: Page, now: int) -> int:
        return self.replica.apply_page(page, now_ms=now, max_skew_ms=MAX_SKEW_MS)

    @rule(
        cursors=st.lists(st.integers(0, 12), min_size=3, max_size=3),
        limit=st.integers(1, 5),
    )
    def answer(self, cursors: list[int], limit: int) -> None:
        """Both answer a catch-up request with the same pages."""
        since = {}
        for origin, cursor in zip(ORIGINS, cursors, strict=True):
            stamps = [0, *sorted(h for o, h in self.made if o == origin)]
            since[origin] = stamps[min(cursor, len(stamps) - 1)]
        store = delta_log.changes_since(self.conn, since, limit)
        assert store == self.replica.changes_since(since, limit), f"answers differ for {since}"

    @rule()
    def reopen(self) -> None:
        """Close and reopen the database: everything replicated survives (TEST-CATALOG 34)."""
        self.conn.close()
        self.conn = open_sync(self.path, synchronous="NORMAL")

    @invariant()
    def agree(self) -> None:
        TOTALS["steps"] += 1
        store, reference = store_records(self.conn), self.replica.records()
        wrong = {k: (store.get(k), reference.get(k)) for k in store.keys() | reference.keys()
                 if store.get(k) != reference.get(k)}  # fmt: skip
        assert not wrong, f"rows differ (store, reference): {wrong}"
        assert delta_log.version_vector(self.conn) == self.replica.vector(), "vectors differ"
        logs = {o: sorted(e) for o, e in self.replica.log.items()}
        assert log_stamps(self.conn) == logs, "logs differ"

    def teardown(self) -> None:
        self.conn.close()
        shutil.rmtree(self.directory, ignore_errors=True)


StoreAgreementMachine.TestCase.settings = pytest_settings("agreement")
TestStoreAgreement = StoreAgreementMachine.TestCase
# Half a minute or more of examples on two busy cores: out of the fast lane.
pytestmark = pytest.mark.slow
