"""storage/memory/stats.py: counts per tier, the log, vectors and the clock."""

from __future__ import annotations

import re

from feral.storage.db.connection import sqlite_version
from feral.storage.log.delta_log import clock_high_water
from feral.storage.memory.stats import database_stats, log_epoch
from feral.storage.store import open_sync, run_write
from feral.storage.vectors.vectors import embed_pending, ensure_vector_tables
from tests.embedders import HashingEmbedder

from .support import A, B, Replica, pull

EMPTY_TIER = {"live": 0, "archived": 0, "deleted": 0}


def test_an_empty_database_counts_nothing(conn):
    stats = database_stats(conn)
    assert stats["tiers"] == {
        "episodic": EMPTY_TIER,
        "semantic": EMPTY_TIER,
        "execution": EMPTY_TIER,
    }
    counts = (stats["delta_log_entries"], stats["origins"], stats["vectors"], stats["hlc"])
    assert counts == (0, 0, 0, 0)
    assert (stats["embedder"], stats["embed_pending"]) == (None, 0)
    assert stats["sqlite_version"] == sqlite_version()


def test_live_archived_and_deleted_rows_are_counted_per_tier(make_replica):
    a: Replica = make_replica("a", A)
    facts = [a.remember(f"fact {i}", "is", "counted") for i in range(5)]
    episodes = [a.episode(f"episode {i}") for i in range(3)]
    entries = [a.execution(f"tool {i}") for i in range(2)]
    a.archive(facts[0]["id"])
    a.archive(facts[1]["id"])
    a.nuke(facts[2]["id"])
    a.archive(episodes[0]["id"])
    a.nuke(episodes[0]["id"])  # an archived row that is then nuked counts as deleted only
    a.nuke(entries[0]["id"])
    stats = database_stats(a.conn)
    assert stats["tiers"] == {
        "semantic": {"live": 2, "archived": 2, "deleted": 1},
        "episodic": {"live": 2, "archived": 0, "deleted": 1},
        "execution": {"live": 1, "archived": 0, "deleted": 1},
    }
    assert stats["delta_log_entries"] == 10 + 6
    assert stats["hlc"] == clock_high_water(a.conn)


def test_vectors_the_embedder_and_the_queue_are_reported(make_replica):
    a: Replica = make_replica("a", A)
    for i in range(3):
        a.remember(f"fact {i}", "is", "embedded")
    assert database_stats(a.conn)["embed_pending"] == 0
    run_write(a.conn, ensure_vector_tables, HashingEmbedder(16))
    assert database_stats(a.conn)["embed_pending"] == 3
    run_write(a.conn, embed_pending, HashingEmbedder(16), 2)
    stats = database_stats(a.conn)
    assert (stats["vectors"], stats["embed_pending"]) == (2, 1)
    assert stats["embedder"] == {"name": "hashing-16", "dim": 16}


def test_origins_count_every_node_whose_log_entries_are_held(make_replica):
    a, b = make_replica("a", A), make_replica("b", B)
    a.remember("from", "node", "a")
    b.remember("from", "node", "b")
    pull(a, b)
    assert database_stats(a.conn)["origins"] == 2
    assert database_stats(b.conn)["origins"] == 1


def test_each_database_gets_its_own_epoch_kept_across_reopening(tmp_path):
    first = open_sync(tmp_path / "one.db")
    second = open_sync(tmp_path / "two.db")
    epoch = log_epoch(first)
    assert re.fullmatch(r"[0-9a-f]{16}", epoch)
    assert log_epoch(second) != epoch
    first.close()
    second.close()
    again = open_sync(tmp_path / "one.db")
    assert log_epoch(again) == database_stats(again)["epoch"] == epoch
    again.close()
