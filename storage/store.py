"""The asynchronous face of the database: one aiosqlite connection, one writer.

aiosqlite runs a connection on its own thread but does not isolate transactions between tasks,
so every write goes through :meth:`Store.write`, which holds an ``asyncio.Lock`` around
``BEGIN IMMEDIATE`` ... ``COMMIT`` (datasette's single writer, in asyncio form). Across processes,
SQLite's write lock and the busy timeout serialise writers. Domain logic is plain synchronous
``fn(conn, ...)`` functions, run on the connection's thread.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from feral.sync.errors import FeralError

from .connection import Connection, DatabaseError, connect
from .errors import StorageError
from .migrations import apply_migrations

__all__ = ["Store", "open_sync"]

T = TypeVar("T")


def open_sync(path: Path | str, *, synchronous: str = "FULL", check: bool = False) -> Connection:
    """Open a database synchronously and bring its schema up to date.

    Args:
        check: run SQLite's ``quick_check`` first. It reads the whole file, so it belongs at
            the start of a long-running server, not in every short CLI command; damage met
            later still surfaces as a :class:`StorageError` on the first read of it.
    """
    conn = connect(path, synchronous=synchronous, check=check and str(path) != ":memory:")
    try:
        apply_migrations(conn)
        _ensure_epoch(conn)
    except DatabaseError as exc:
        conn.close()
        raise StorageError(f"cannot prepare {path}: {exc}") from exc
    except Exception:
        conn.close()
        raise
    return conn


def _ensure_epoch(conn: Connection) -> None:
    """Give a new database a random log epoch, so a wiped or replaced log can be told apart."""
    conn.execute(
        "INSERT OR IGNORE INTO meta(key, value) VALUES ('epoch', ?)", (secrets.token_hex(8),)
    )


def run_write(conn: Connection, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run ``fn(conn, ...)`` in one ``BEGIN IMMEDIATE`` transaction; roll back on any error."""
    try:
        conn.execute("BEGIN IMMEDIATE")
    except DatabaseError as exc:
        raise StorageError(f"cannot start a write: {exc}") from exc
    try:
        result = fn(conn, *args, **kwargs)
        conn.execute("COMMIT")
    except FeralError:
        conn.execute("ROLLBACK")
        raise
    except DatabaseError as exc:
        conn.execute("ROLLBACK")
        raise StorageError(f"write failed: {exc}") from exc
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return result


class Store:
    """One node's database, opened with its migrations applied.

    Use :meth:`open`; then ``await store.read(fn, ...)`` and ``await store.write(fn, ...)``.
    """

    def __init__(self, db: aiosqlite.Connection, path: Path) -> None:
        self._db = db
        self.path = path
        self._write_lock = asyncio.Lock()

    @classmethod
    async def open(cls, path: Path, *, synchronous: str = "FULL", check: bool = False) -> Store:
        """Open (creating if needed) the database at ``path``."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            if os.name == "posix":
                # Owner-only before SQLite opens it: SQLite gives the -wal and -shm files it
                # creates the database file's mode, and the WAL holds recent writes in full.
                os.close(os.open(path, os.O_CREAT | os.O_RDWR, 0o600))
                os.chmod(path, 0o600)
        except OSError as exc:
            raise StorageError(f"cannot create {path}: {exc.strerror}") from exc
        # Open (and migrate, and check) before aiosqlite starts its thread: a refused database
        # then fails here, cleanly, instead of leaving a worker thread behind.
        conn = await asyncio.to_thread(open_sync, path, synchronous=synchronous, check=check)
        db = aiosqlite.Connection(lambda: conn, 64)
        await db
        return cls(db, path)

    async def close(self) -> None:
        await self._db.close()

    async def _call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        # aiosqlite's documented methods cover single statements; running a whole function on
        # the connection's thread is what its private _execute does, and the one place we use it.
        return await self._db._execute(fn, *args, **kwargs)  # type: ignore[no-untyped-call,no-any-return]

    async def read(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run ``fn(conn, ...)`` outside any write transaction (WAL readers never block)."""
        try:
            return await self._call(fn, self._db._conn, *args, **kwargs)
        except DatabaseError as exc:
            raise StorageError(f"read failed: {exc}") from exc

    async def write(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run ``fn(conn, ...)`` as the only writer, in one ``BEGIN IMMEDIATE`` transaction."""
        async with self._write_lock:
            return await self._call(run_write, self._db._conn, fn, *args, **kwargs)
