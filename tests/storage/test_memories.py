"""storage/memory/memories.py: remember, record, archive, restore, nuke, bulk import, and two
writers."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

import pytest

from feral.storage.db.connection import Connection
from feral.storage.log.delta_log import changes_since, clock_high_water, version_vector
from feral.storage.memory.memories import find_row, import_facts, list_episodes, remember_fact
from feral.storage.search.query import search_fts
from feral.storage.store import open_sync, run_write
from feral.sync.errors import NotFoundError, SchemaError
from feral.sync.hlc import HybridClock, unpack
from feral.sync.ids import fact_id

from .support import (
    T0,
    A,
    B,
    Replica,
    assert_converged,
    export_text,
    pull,
    sync_until_quiet,
)

ROOT = Path(__file__).resolve().parents[2]


def log_size(conn: Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM delta_log").fetchone()[0])


def fact_rows(conn: Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM facts").fetchone()[0])


@pytest.fixture
def a(make_replica) -> Replica:
    return make_replica("a", A)


# -- remember ------------------------------------------------------------------------------------


def test_a_remembered_fact_is_a_live_semantic_row_with_its_clock_fields(a: Replica):
    row = a.remember("Dr. Chen", "is", "my doctor", confidence=0.75)
    assert row["id"] == fact_id("Dr. Chen", "is", "my doctor")
    assert row["tier"] == "semantic"
    assert (row["subject"], row["predicate"], row["object"]) == ("Dr. Chen", "is", "my doctor")
    assert (row["confidence"], row["archived"], row["deleted"], row["origin"]) == (
        0.75,
        False,
        False,
        A,
    )
    assert row["created_at"] == a.time()


@pytest.mark.parametrize(
    "spelling",
    [
        ("Café", "serves", "crème brûlée"),
        ("CAFÉ", "SERVES", "CRÈME BRÛLÉE"),
        ("  café ", "serves\t", " crème   brûlée\n"),
        tuple(unicodedata.normalize("NFD", p) for p in ("Café", "serves", "crème brûlée")),
    ],
    ids=["as typed", "upper case", "extra whitespace", "NFD"],
)
def test_the_same_fact_in_another_spelling_is_one_row_and_no_second_log_entry(a, spelling):
    first = a.remember("Café", "serves", "crème brûlée")
    again = a.remember(*spelling)
    assert again["id"] == first["id"]
    assert again == first
    assert fact_rows(a.conn) == 1
    assert log_size(a.conn) == 1


def test_remembering_a_live_fact_with_another_confidence_writes_nothing(a: Replica):
    first = a.remember("sky", "is", "blue", confidence=0.5)
    assert a.remember("sky", "is", "blue", confidence=0.9) == first
    assert log_size(a.conn) == 1


def test_remembering_an_archived_fact_restores_it_with_a_new_write(a: Replica):
    row = a.remember("sky", "is", "blue", confidence=0.5)
    a.archive(row["id"])
    back = a.remember("sky", "is", "blue", confidence=0.9)
    assert (back["archived"], back["confidence"]) == (False, 0.9)
    assert back["created_at"] == row["created_at"]
    assert back["hlc"] > row["hlc"]
    assert log_size(a.conn) == 3


def test_text_with_a_nul_character_is_refused_and_nothing_is_written(a: Replica):
    with pytest.raises(SchemaError, match="NUL"):
        a.remember("bad\x00subject", "is", "refused")
    assert (fact_rows(a.conn), log_size(a.conn), clock_high_water(a.conn)) == (0, 0, 0)


def test_text_beyond_the_column_cap_is_refused(a: Replica):
    with pytest.raises(SchemaError, match="exceeds"):
        a.remember("big", "is", "x" * 70_000)
    assert fact_rows(a.conn) == 0


# -- archive and restore -------------------------------------------------------------------------


def test_archive_and_restore_round_trip(a: Replica):
    row = a.remember("sky", "is", "blue")
    archived = a.archive(row["id"])
    assert archived["archived"] is True and archived["hlc"] > row["hlc"]
    assert search_fts(a.conn, "sky", 10) == []
    restored = a.restore(row["id"])
    assert restored["archived"] is False and restored["hlc"] > archived["hlc"]
    assert {k: v for k, v in restored.items() if k != "hlc"} == {
        k: v for k, v in row.items() if k != "hlc"
    }
    assert [h.id for h in search_fts(a.conn, "sky", 10)] == [row["id"]]
    assert log_size(a.conn) == 3


def test_archiving_an_archived_row_writes_nothing(a: Replica):
    row = a.remember("sky", "is", "blue")
    first = a.archive(row["id"])
    assert a.archive(row["id"]) == first
    assert log_size(a.conn) == 2


def test_episodes_can_be_archived_and_restored(a: Replica):
    episode = a.episode("walked the dog", ["dog"])
    assert a.archive(episode["id"])["archived"] is True
    assert list_episodes(a.conn, 10) == []
    assert [e["id"] for e in list_episodes(a.conn, 10, include_archived=True)] == [episode["id"]]
    a.restore(episode["id"])
    assert [e["id"] for e in list_episodes(a.conn, 10)] == [episode["id"]]


def test_archiving_an_unknown_id_raises_not_found(a: Replica):
    with pytest.raises(NotFoundError, match="no memory"):
        a.archive("f0000000000000000000000000000000")
    with pytest.raises(NotFoundError):
        a.restore('"; DROP TABLE facts; --')
    assert log_size(a.conn) == 0


def test_execution_log_entries_cannot_be_archived(a: Replica):
    entry = a.execution("calendar")
    assert entry["tier"] == "execution"
    with pytest.raises(NotFoundError, match="execution-log"):
        a.archive(entry["id"])
    assert log_size(a.conn) == 1


def test_execution_log_entries_keep_their_json(a: Replica):
    entry = a.execution("calendar")
    assert json.loads(entry["args"]) == {"q": "calendar"}
    assert json.loads(entry["result"]) == {"ok": True}
    assert (entry["success"], entry["latency_ms"]) == (True, 12)


# -- nuke ----------------------------------------------------------------------------------------


def test_nuke_leaves_a_tombstone_with_its_content_emptied(a: Replica):
    row = a.remember("secret", "is", "forgettable", confidence=0.3)
    tomb = a.nuke(row["id"])
    assert tomb["deleted"] is True and tomb["hlc"] > row["hlc"]
    assert (tomb["subject"], tomb["predicate"], tomb["object"]) == ("", "", "")
    assert (tomb["confidence"], tomb["created_at"], tomb["source_episode"]) == (0.0, 0, None)
    with pytest.raises(NotFoundError):
        find_row(a.conn, row["id"])
    assert find_row(a.conn, row["id"], live_only=False)[1] == tomb
    assert search_fts(a.conn, "secret forgettable", 10) == []
    fts = a.conn.execute("SELECT count(*) FROM facts_fts WHERE facts_fts MATCH 'secret'")
    assert fts.fetchone() == (0,)


def test_a_nuked_row_cannot_be_nuked_archived_or_restored(a: Replica):
    row = a.episode("a private note")
    a.nuke(row["id"])
    entries = log_size(a.conn)
    for action in (a.nuke, a.archive, a.restore):
        with pytest.raises(NotFoundError):
            action(row["id"])
    assert log_size(a.conn) == entries


def test_nuke_on_an_unknown_id_raises_not_found(a: Replica):
    with pytest.raises(NotFoundError):
        a.nuke("nothing")


def test_remembering_a_nuked_fact_brings_it_back_as_a_new_write(a: Replica):
    row = a.remember("sky", "is", "blue")
    a.nuke(row["id"])
    back = a.remember("sky", "is", "blue")
    assert (back["deleted"], back["subject"]) == (False, "sky")
    assert back["created_at"] == a.time()  # a new life, not the old row's


def test_an_older_write_arriving_after_a_nuke_does_not_resurrect_the_row(make_replica):
    a = make_replica("a", A, start=T0 + 10_000)
    b = make_replica("b", B, start=T0)
    row = b.remember("secret", "is", "kept")
    pull(a, b)
    b.archive(row["id"])  # stamped around T0: older than anything A stamps next
    b.restore(row["id"])
    a.nuke(row["id"])
    sync_until_quiet([(a, b)])
    for replica in (a, b):
        _, tomb = find_row(replica.conn, row["id"], live_only=False)
        assert (tomb["deleted"], tomb["origin"]) == (True, A)
        with pytest.raises(NotFoundError):
            find_row(replica.conn, row["id"])
    # Replaying every old page, in any order, changes nothing either.
    before = export_text(a.conn)
    for replica, other in ((a, b), (b, a)):
        for page in reversed(changes_since(other.conn, {}, 1)):
            assert replica.apply(page) == 0
        for page in changes_since(other.conn, {}, 1000):
            assert replica.apply(page) == 0
    assert export_text(a.conn) == before
    assert_converged(a, b)


# -- bulk import ---------------------------------------------------------------------------------


def test_import_skips_live_facts_and_repeats_within_the_batch(a: Replica):
    a.remember("one", "is", "1")
    triples = [("one", "is", "1"), ("two", "is", "2"), ("TWO", "is", "2"), ("three", "is", "3")]
    written = run_write(a.conn, import_facts, A, a.clock.tick, triples, now_ms=a.time())
    assert written == 2
    assert fact_rows(a.conn) == 3 and log_size(a.conn) == 3


IMPORTED = 70_000
"""Facts imported in one frozen millisecond: past the 65,536 stamps its counter holds."""


@pytest.mark.slow
def test_importing_70k_facts_in_batches_keeps_every_stamp_unique_and_increasing(
    conn: Connection,
):
    # 70,000 writes in one frozen millisecond (TEST-CATALOG 15): more than the 16-bit counter
    # holds, so the clock must borrow the next millisecond, once.
    frozen = HybridClock(A, lambda: T0)
    triples = [(f"subject {i}", "relates to", f"object {i * 7}") for i in range(IMPORTED)]
    total = 0
    for start in range(0, len(triples), 5000):
        batch = triples[start : start + 5000]
        total += run_write(conn, import_facts, A, frozen.tick, batch, now_ms=T0)
    assert total == IMPORTED
    count, distinct, high = conn.execute(
        "SELECT count(*), count(DISTINCT hlc), max(hlc) FROM delta_log"
    ).fetchone()
    assert count == distinct == IMPORTED
    logged = [r[0] for r in conn.execute("SELECT row_id FROM delta_log ORDER BY hlc")]
    assert logged == [fact_id(*t) for t in triples]  # stamps increase in import order
    assert unpack(high) == (T0 + 1, IMPORTED - 65_536 - 1)  # borrowed exactly one millisecond
    assert clock_high_water(conn) == version_vector(conn)[A] == high
    assert conn.execute("SELECT count(*) FROM facts").fetchone() == (IMPORTED,)
    last = f"subject {IMPORTED - 1}"
    assert [h.row["subject"] for h in search_fts(conn, last, 1)] == [last]


# -- two processes, one file ---------------------------------------------------------------------

WRITER = """
import json, sys, time
from pathlib import Path
from feral.storage.memory.memories import remember_fact
from feral.storage.store import open_sync, run_write
from feral.sync.hlc import HybridClock

path, tag, node, go = sys.argv[1:5]
conn = open_sync(path)
clock = HybridClock(node, lambda: time.time_ns() // 1_000_000)
Path(f"{go}.{tag}").touch()
while not Path(go).exists():
    time.sleep(0.002)
stamps = []
for i in range(200):
    row = run_write(conn, remember_fact, node, clock.tick, (f"{tag} {i}", "is", "written"),
                    now_ms=time.time_ns() // 1_000_000)
    stamps.append(row["hlc"])
conn.close()
print(json.dumps(stamps))
"""


def test_two_processes_writing_one_file_at_once_both_succeed_with_distinct_stamps(
    tmp_path: Path,
):
    path = tmp_path / "shared.db"
    open_sync(path).close()
    go = tmp_path / "go"
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), tag, A, str(go)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("cli", "serve")
    ]
    deadline = time.monotonic() + 30
    while not all(Path(f"{go}.{tag}").exists() for tag in ("cli", "serve")):
        assert time.monotonic() < deadline, "the writers never got ready"
        time.sleep(0.005)
    go.touch()
    results = []
    for writer in writers:
        out, err = writer.communicate(timeout=60)
        assert writer.returncode == 0, err
        results.append(json.loads(out))
    for stamps in results:
        assert len(stamps) == 200
        assert all(x < y for x, y in zip(stamps, stamps[1:], strict=False))
    first, second = results
    # Both start together, but their stamps need not interleave: SQLite's busy handler sleeps
    # while the other process keeps re-taking the write lock, so one often runs first.
    conn = open_sync(path)
    try:
        counts = conn.execute("SELECT count(*), count(DISTINCT hlc) FROM delta_log").fetchone()
        assert counts == (400, 400)
        logged = {r[0] for r in conn.execute("SELECT hlc FROM delta_log")}
        assert logged == set(first) | set(second)
        assert conn.execute("SELECT count(*) FROM facts").fetchone() == (400,)
        assert clock_high_water(conn) == max(logged)
    finally:
        conn.close()


# -- helpers used by other tiers -----------------------------------------------------------------


def test_list_episodes_shows_the_newest_first_and_hides_deleted_ones(a: Replica):
    first = a.episode("first")
    second = a.episode("second")
    third = a.episode("third")
    a.nuke(second["id"])
    ids = [e["id"] for e in list_episodes(a.conn, 10, include_archived=True)]
    assert ids == [third["id"], first["id"]]
    assert [e["id"] for e in list_episodes(a.conn, 1)] == [third["id"]]


def test_remember_fact_records_its_source_episode(a: Replica):
    episode = a.episode("talked about tea")
    row = run_write(
        a.conn,
        remember_fact,
        A,
        a.clock.tick,
        ("Alice", "likes", "tea"),
        now_ms=a.time(),
        source_episode=episode["id"],
    )
    assert row["source_episode"] == episode["id"]
