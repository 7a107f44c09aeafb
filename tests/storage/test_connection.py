"""storage/db/connection.py: the one SQLite build, its pragmas, and refusing bad files."""

from __future__ import annotations

import shutil
from contextlib import closing
from pathlib import Path

import pytest

from feral.storage.db.connection import BUSY_TIMEOUT_MS, DatabaseError, connect, sqlite_version
from feral.storage.db.errors import CorruptDatabase, StorageError
from feral.storage.memory.memories import import_facts
from feral.storage.store import open_sync, run_write
from feral.sync.hlc import HybridClock

from .support import T0, A


def pragma(conn, name: str):
    return conn.execute(f"PRAGMA {name}").fetchone()[0]


def test_a_new_file_gets_wal_full_sync_foreign_keys_and_an_untrusted_schema(tmp_path: Path):
    with closing(connect(tmp_path / "feral.db")) as conn:
        assert pragma(conn, "journal_mode") == "wal"
        assert pragma(conn, "synchronous") == 2
        assert pragma(conn, "foreign_keys") == 1
        assert pragma(conn, "trusted_schema") == 0
        assert pragma(conn, "busy_timeout") == BUSY_TIMEOUT_MS


def test_synchronous_normal_is_honoured_when_asked_for(tmp_path: Path):
    with closing(connect(tmp_path / "feral.db", synchronous="NORMAL")) as conn:
        assert pragma(conn, "synchronous") == 1


def test_an_unknown_synchronous_mode_is_refused_before_it_reaches_sql(tmp_path: Path):
    with pytest.raises(StorageError, match="unsupported synchronous mode"):
        connect(tmp_path / "feral.db", synchronous="OFF; DROP TABLE meta")


def test_extension_loading_is_off(tmp_path: Path):
    with closing(connect(tmp_path / "feral.db")) as conn:
        with pytest.raises(DatabaseError, match="not authorized"):
            conn.execute("SELECT load_extension('does-not-exist')")


def test_fts5_is_available():
    with closing(connect(":memory:", check=False)) as conn:
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(body)")
        conn.execute("INSERT INTO t(body) VALUES ('the doctor is Dr. Chen')")
        assert conn.execute("SELECT count(*) FROM t WHERE t MATCH 'chen'").fetchone() == (1,)


def test_the_bundled_sqlite_is_recent_enough_for_strict_tables_and_upsert():
    major, minor, *_ = (int(p) for p in sqlite_version().split("."))
    assert (major, minor) >= (3, 37)


def test_a_file_that_is_not_a_database_is_reported_as_corrupt_not_as_a_raw_sqlite_error(
    tmp_path: Path,
):
    path = tmp_path / "notes.txt"
    path.write_bytes(b"these are my notes, not a database\n" * 200)
    with pytest.raises(CorruptDatabase, match="not a database") as caught:
        connect(path)
    assert isinstance(caught.value, StorageError)
    assert not isinstance(caught.value, DatabaseError)
    assert isinstance(caught.value.__cause__, DatabaseError)


def test_open_sync_refuses_a_file_that_is_not_a_database(tmp_path: Path):
    path = tmp_path / "feral.db"
    path.write_bytes(b"\x00garbage" * 1000)
    with pytest.raises(CorruptDatabase):
        open_sync(path)
    assert path.read_bytes() == b"\x00garbage" * 1000


def test_a_path_in_a_missing_directory_is_a_storage_error(tmp_path: Path):
    with pytest.raises(StorageError, match="cannot open database") as caught:
        connect(tmp_path / "missing" / "feral.db")
    assert not isinstance(caught.value, DatabaseError)


def test_an_empty_file_is_a_new_database(tmp_path: Path):
    path = tmp_path / "feral.db"
    path.touch()
    with closing(open_sync(path)) as conn:
        assert conn.execute("SELECT count(*) FROM facts").fetchone() == (0,)


def make_database_with_many_pages(path: Path) -> int:
    conn = open_sync(path)
    clock = HybridClock(A, lambda: T0)
    triples = [(f"subject {i}", "is described by", f"object text {i} " * 8) for i in range(1500)]
    run_write(conn, import_facts, A, clock.tick, triples, now_ms=T0)
    page_count = conn.execute("PRAGMA page_count").fetchone()[0]
    assert conn.execute("PRAGMA freelist_count").fetchone() == (0,)
    conn.close()  # checkpoints the WAL into the main file and removes it
    assert not Path(f"{path}-wal").exists()
    return int(page_count)


def test_a_database_with_a_flipped_page_is_reported_as_corrupt(tmp_path: Path):
    good = tmp_path / "good.db"
    pages = make_database_with_many_pages(good)
    assert pages > 20
    bad = tmp_path / "bad.db"
    shutil.copy(good, bad)
    page_size = 4096
    assert bad.stat().st_size == pages * page_size
    with bad.open("r+b") as f:
        f.seek((pages // 2) * page_size)
        original = f.read(64)
        f.seek((pages // 2) * page_size)
        f.write(bytes(b ^ 0xFF for b in original))
    with closing(open_sync(bad)):
        pass  # short commands skip the whole-file check: it is the server's start-up job
    with pytest.raises(CorruptDatabase, match="bad.db") as caught:
        open_sync(bad, check=True)
    assert not isinstance(caught.value, DatabaseError)
    # The original copy is untouched and still opens.
    with closing(open_sync(good)) as conn:
        assert conn.execute("SELECT count(*) FROM facts").fetchone() == (1500,)
