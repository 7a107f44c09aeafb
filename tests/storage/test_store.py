"""storage/store.py: the asynchronous store, its single writer, and opening files safely."""

from __future__ import annotations

import asyncio
import os
import stat
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import sqlean

from feral.storage.db.connection import Connection, DatabaseError
from feral.storage.db.errors import CorruptDatabase, StorageError
from feral.storage.log.delta_log import clock_high_water
from feral.storage.memory.export import export_lines
from feral.storage.memory.memories import find_row, remember_fact, set_archived
from feral.storage.store import Store, open_sync, run_write
from feral.sync.errors import NotFoundError
from feral.sync.hlc import HybridClock

from .support import T0, A, ManualClock

posix_only = pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    opened = await Store.open(tmp_path / "home" / "feral.db")
    yield opened
    await opened.close()


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def count(conn, table: str) -> int:
    return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def worker_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("feral-db")}


@posix_only
async def test_open_creates_the_database_readable_by_its_owner_only(store: Store):
    assert mode(store.path) == 0o600
    assert mode(store.path.parent) == 0o700


@posix_only
async def test_the_wal_and_shared_memory_files_are_owner_only_too(store: Store):
    # The WAL holds recent writes in full. Before the fix the database was chmod-ed after
    # SQLite had created it (and its -wal and -shm) under the umask, so they stayed 0644.
    clock = HybridClock(A, ManualClock())
    await store.write(remember_fact, A, clock.tick, ("a", "secret", "fact"), now_ms=T0)
    for suffix in ("-wal", "-shm"):
        companion = Path(f"{store.path}{suffix}")
        assert companion.exists()
        assert mode(companion) == 0o600, suffix


async def test_a_write_is_visible_to_a_later_read(store: Store):
    clock = HybridClock(A, ManualClock())
    row = await store.write(remember_fact, A, clock.tick, ("sky", "is", "blue"), now_ms=T0)
    _, found = await store.read(find_row, row["id"])
    assert found == row


async def test_a_write_that_raises_rolls_back_everything(store: Store):
    clock = HybridClock(A, ManualClock())

    def remember_then_fail(conn):
        remember_fact(conn, A, clock.tick, ("half", "written", "fact"), now_ms=T0)
        assert count(conn, "facts") == 1  # inside the transaction it is there
        raise ValueError("the caller changed its mind")

    with pytest.raises(ValueError, match="changed its mind"):
        await store.write(remember_then_fail)
    for table in ("facts", "delta_log", "version_vector", "embed_queue"):
        assert await store.read(count, table) == 0, table
    assert await store.read(clock_high_water) == 0


async def test_a_database_error_inside_a_write_becomes_a_storage_error_and_rolls_back(
    store: Store,
):
    clock = HybridClock(A, ManualClock())

    def remember_then_break(conn):
        remember_fact(conn, A, clock.tick, ("half", "written", "fact"), now_ms=T0)
        conn.execute("INSERT INTO no_such_table VALUES (1)")

    with pytest.raises(StorageError, match="no_such_table") as caught:
        await store.write(remember_then_break)
    assert isinstance(caught.value.__cause__, DatabaseError)
    assert await store.read(count, "facts") == 0


async def test_a_write_that_rolls_itself_back_returns_and_leaves_nothing(store: Store):
    """A link refusing a page rolls the event's transaction back and returns
    (storage/link/handler.py): there is nothing to commit, and the write is no error."""
    clock = HybridClock(A, ManualClock())

    def remember_then_roll_back(conn):
        remember_fact(conn, A, clock.tick, ("half", "written", "fact"), now_ms=T0)
        conn.execute("ROLLBACK")
        return "refused"

    assert await store.write(remember_then_roll_back) == "refused"
    assert await store.read(count, "facts") == 0
    await store.write(remember_fact, A, clock.tick, ("still", "works", "fine"), now_ms=T0)
    assert await store.read(count, "facts") == 1


async def test_feral_errors_inside_a_write_pass_through_unchanged(store: Store):
    def archive_nothing(conn):
        return set_archived(conn, A, HybridClock(A, ManualClock()).tick, "nothing", True)

    with pytest.raises(NotFoundError):
        await store.write(archive_nothing)
    # The store is still usable: no transaction was left open.
    clock = HybridClock(A, ManualClock())
    await store.write(remember_fact, A, clock.tick, ("still", "works", "fine"), now_ms=T0)


async def test_fifty_concurrent_writes_all_land_with_distinct_stamps(store: Store):
    clock = HybridClock(A, ManualClock())
    rows = await asyncio.gather(
        *(
            store.write(remember_fact, A, clock.tick, (f"fact {i}", "is", "concurrent"), now_ms=T0)
            for i in range(50)
        )
    )
    stamps = [row["hlc"] for row in rows]
    assert len(set(stamps)) == 50
    assert await store.read(count, "facts") == 50
    logged = await store.read(lambda c: [r[0] for r in c.execute("SELECT hlc FROM delta_log")])
    assert sorted(logged) == sorted(stamps)


async def test_failing_writes_among_concurrent_ones_leave_no_trace(store: Store):
    clock = HybridClock(A, ManualClock())

    def write(conn, i: int):
        row = remember_fact(conn, A, clock.tick, (f"fact {i}", "is", "maybe"), now_ms=T0)
        if i % 3 == 0:
            raise ValueError(i)
        return row

    results = await asyncio.gather(
        *(store.write(write, i) for i in range(30)), return_exceptions=True
    )
    landed = [r for r in results if not isinstance(r, BaseException)]
    assert len(landed) == 20
    subjects = await store.read(lambda c: {r[0] for r in c.execute("SELECT subject FROM facts")})
    assert subjects == {f"fact {i}" for i in range(30) if i % 3}
    assert await store.read(count, "delta_log") == 20


async def test_a_database_error_inside_a_read_becomes_a_storage_error(store: Store):
    with pytest.raises(StorageError, match="read failed: .*no_such_table") as caught:
        await store.read(count, "no_such_table")
    assert isinstance(caught.value.__cause__, DatabaseError)


async def test_reads_and_writes_run_on_one_thread_that_is_not_the_event_loops(store: Store):
    def thread_of(conn) -> int:
        return threading.get_ident()

    seen = {await store.read(thread_of), await store.write(thread_of), await store.read(thread_of)}
    assert len(seen) == 1
    assert threading.get_ident() not in seen


async def test_close_closes_the_connection_and_joins_its_thread(tmp_path: Path):
    store = await Store.open(tmp_path / "feral.db")
    thread = await store.read(lambda conn: threading.current_thread())
    assert thread.is_alive()
    await store.close()
    assert not thread.is_alive()  # joined, not merely told to stop
    await store.close()  # a second close does nothing


async def test_reopening_keeps_the_rows_and_the_clock_high_water(tmp_path: Path):
    path = tmp_path / "feral.db"
    first = await Store.open(path)
    clock = HybridClock(A, ManualClock())
    row = await first.write(remember_fact, A, clock.tick, ("kept", "across", "restarts"), now_ms=T0)
    lines = await first.read(lambda c: list(export_lines(c)))
    await first.close()
    again = await Store.open(path)
    try:
        assert await again.read(lambda c: list(export_lines(c))) == lines
        assert await again.read(clock_high_water) == row["hlc"]
        # A restart with the wall clock stepped back (inside the drift limit) still stamps above.
        behind = HybridClock(A, ManualClock(T0 - 288_000))
        triple = ("after", "the", "restart")
        later = await again.write(remember_fact, A, behind.tick, triple, now_ms=T0)
        assert later["hlc"] > row["hlc"]
    finally:
        await again.close()


async def test_opening_a_corrupt_file_raises_cleanly_and_leaves_no_thread(tmp_path: Path):
    path = tmp_path / "feral.db"
    path.write_bytes(b"not a database at all\n" * 500)
    before = worker_threads()
    with pytest.raises(CorruptDatabase):
        await Store.open(path)
    # Store.open joins the thread before the error goes up: none is left, not even for a moment.
    assert worker_threads() <= before
    assert path.read_bytes() == b"not a database at all\n" * 500


async def test_a_store_and_a_synchronous_connection_share_one_file(tmp_path: Path):
    path = tmp_path / "feral.db"
    store = await Store.open(path)
    other = open_sync(path)
    try:
        cli = HybridClock(A, ManualClock())
        node = HybridClock(A, ManualClock())  # two clocks on one home, as CLI and serve
        first = run_write(other, remember_fact, A, cli.tick, ("from", "the", "cli"), now_ms=T0)
        row = await store.write(remember_fact, A, node.tick, ("from", "the", "node"), now_ms=T0)
        assert row["hlc"] > first["hlc"]
        assert clock_high_water(other) == row["hlc"]
        assert await store.read(count, "facts") == 2
    finally:
        other.close()
        await store.close()


def test_a_write_that_sqlite_already_rolled_back_raises_its_own_error(tmp_path: Path) -> None:
    """A full disk, an I/O error or ``OR ROLLBACK`` end the transaction inside SQLite; the
    ``ROLLBACK`` that follows must not replace the error with "no transaction is active"."""
    conn = open_sync(tmp_path / "db.sqlite")
    try:
        conn.execute("INSERT INTO meta(key, value) VALUES ('k', 'v')")

        def collide(c: Connection) -> None:
            c.execute("INSERT OR ROLLBACK INTO meta(key, value) VALUES ('k', 'w')")

        with pytest.raises(StorageError, match="UNIQUE constraint failed") as caught:
            run_write(conn, collide)
        assert "no transaction is active" not in str(caught.value)
        assert not conn.in_transaction
        assert conn.execute("SELECT value FROM meta WHERE key = 'k'").fetchall() == [("v",)]
    finally:
        conn.close()


def test_opening_a_database_with_nothing_pending_takes_no_write_lock(tmp_path: Path) -> None:
    """No migration, no epoch to set: an open only reads, so it opens while another process
    holds the write lock (a long import) and on a full disk, where no write can succeed."""
    path = tmp_path / "db.sqlite"
    open_sync(path).close()
    writer = sqlean.connect(str(path), isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")
        conn = open_sync(path)
        conn.close()
    finally:
        writer.close()
