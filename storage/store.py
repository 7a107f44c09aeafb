"""The asynchronous face of the database: one connection on its own thread, one writer.

The connection lives on a one-thread executor (``ThreadPoolExecutor(max_workers=1)``) and
every call on it is a plain synchronous ``fn(conn, ...)`` handed over with asyncio's
``run_in_executor``: the one thread runs one function at a time, in order, so a whole write
transaction runs without any other statement in between. This replaced aiosqlite, whose public
methods each run one statement: running a whole function on its thread took its private
``_execute`` and ``_conn``, and the executor does the same job with the standard library.

Neither isolates transactions between tasks, so every write goes through :meth:`Store.write`,
which holds an ``asyncio.Lock`` around ``BEGIN IMMEDIATE`` ... ``COMMIT`` (datasette's single
writer, in asyncio form). Across processes, SQLite's write lock and the busy timeout serialise
writers. ``fn``'s arguments are checked against its signature (``ParamSpec``), so a call that
does not fit ``fn`` fails ``mypy``, not a user's write.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar

from feral.storage.db.connection import (
    Connection,
    DatabaseError,
    connect,
    connect_immutable,
    connect_read_only,
    out_of_space,
    schema_of,
)
from feral.storage.db.errors import StorageError
from feral.storage.db.migrations import (
    Migration,
    and_extension,
    apply_migrations,
    pending,
    record_schema_version,
    refuse_newer,
)
from feral.storage.log import row_digest
from feral.sync.errors import FeralError
from feral.sync.schema import BASE_SCHEMA, Schema

__all__ = [
    "Store",
    "close_untouched",
    "open_for_reading",
    "open_sync",
    "roll_back",
    "run_write",
    "unwritable",
]

P = ParamSpec("P")
T = TypeVar("T")


def open_sync(
    path: Path | str,
    *,
    synchronous: str = "FULL",
    check: bool = False,
    schema: Schema | None = None,
    migrations: tuple[Migration, ...] = (),
) -> Connection:
    """Open a database synchronously and bring its schema up to date.

    Opening writes nothing when nothing is pending (no migration, the epoch already set), so a
    database on a full disk still opens; see :func:`open_for_reading` for the files SQLite
    itself needs.

    Args:
        check: run SQLite's ``quick_check`` first. It reads the whole file, so it belongs at
            the start of a long-running server, not in every short CLI command; damage met
            later still surfaces as a :class:`StorageError` on the first read of it.
        schema: the replicated schema its rows are read and written by: this release's
            (``feral.sync.schema.BASE_SCHEMA``) unless given; a newer release's is wider
            (docs/PROTOCOL.md §10).
        migrations: the steps of such a wider schema, applied after this release's.
    """
    schema, steps = schema or BASE_SCHEMA, and_extension(migrations)
    checked = check and str(path) != ":memory:"
    conn = connect(path, synchronous=synchronous, check=checked, schema=schema)
    try:
        refuse_newer(conn, schema.version, steps)
        apply_migrations(conn, steps)
        record_schema_version(conn, schema.version)
        _ensure_epoch(conn)
        row_digest.fill_missing(conn)
    except DatabaseError as exc:
        conn.close()
        raise StorageError(f"cannot prepare {path}: {exc}") from exc
    except Exception:
        conn.close()
        raise
    return conn


def open_for_reading(
    path: Path,
    error: StorageError,
    schema: Schema | None = None,
    migrations: tuple[Migration, ...] = (),
) -> Connection:
    """The database opened read-only after ``error``, if the disk is full or the database
    cannot be written (a read-only filesystem or folder), and that is safe.

    A WAL database needs its ``-wal`` and ``-shm`` files, which the first connection creates
    and the last one removes; on a full disk they cannot be created, and every command,
    ``memory export`` included, would fail. When no ``-wal`` file holds anything, the last
    connection checkpointed everything into the database file, so reading the file alone
    (SQLite's ``immutable``) reads every committed write: the user can still rescue their data.

    Raises:
        StorageError: ``error`` itself when it is not a full disk, the WAL holds writes, or a
            migration is pending (the schema is not the one this code reads).
    """
    wal = Path(f"{path}-wal")
    if not (out_of_space(error) or unwritable(path)) or (wal.exists() and wal.stat().st_size > 0):
        raise error
    schema, steps = schema or BASE_SCHEMA, and_extension(migrations)
    conn = connect_immutable(path, schema)
    try:
        refuse_newer(conn, schema.version, steps)
        if pending(conn, steps):
            raise error
    except BaseException:
        conn.close()
        raise
    return conn


def _ensure_epoch(conn: Connection) -> None:
    """Give a new database a random log epoch, so a wiped or replaced log can be told apart.

    Read first: an existing epoch needs no write (and no write lock) at every open.
    """
    if conn.execute("SELECT 1 FROM meta WHERE key = 'epoch'").fetchone() is None:
        conn.execute(
            "INSERT OR IGNORE INTO meta(key, value) VALUES ('epoch', ?)", (secrets.token_hex(8),)
        )


def run_write(
    conn: Connection,
    fn: Callable[Concatenate[Connection, P], T],
    /,
    *args: P.args,
    **kwargs: P.kwargs,
) -> T:
    """Run ``fn(conn, ...)`` in one ``BEGIN IMMEDIATE`` transaction; roll back on any error.

    ``fn`` may roll the transaction back itself and return (storage/link/handler.py does, for a page
    it refuses): there is then nothing to commit.
    """
    try:
        conn.execute("BEGIN IMMEDIATE")
    except DatabaseError as exc:
        raise StorageError(f"cannot start a write: {exc}") from exc
    try:
        result = fn(conn, *args, **kwargs)
        if conn.in_transaction:
            conn.execute("COMMIT")
    except FeralError:
        roll_back(conn)
        raise
    except DatabaseError as exc:
        roll_back(conn)
        raise StorageError(f"write failed: {exc}") from exc
    except BaseException:
        roll_back(conn)
        raise
    return result


def roll_back(conn: Connection) -> None:
    """Roll back the open transaction, if SQLite has not already done so.

    After some errors (a full disk, an I/O error, an interrupt) SQLite rolls the transaction
    back by itself, and a ``ROLLBACK`` then fails with "cannot rollback - no transaction is
    active": raised from the handler, that error would replace the one that explains the
    failure. A ``ROLLBACK`` that fails for any other reason is dropped for the same reason.
    """
    if conn.in_transaction:
        with contextlib.suppress(DatabaseError):
            conn.execute("ROLLBACK")


def close_untouched(conn: Connection, path: Path) -> None:
    """Close ``conn`` without writing the database file at ``path``.

    The last connection to close a WAL database checkpoints the log into the file and deletes
    the log; into a file another program wrote over, or beside a log that is not this one's,
    that would mix two databases. A read transaction of a read-only connection holds the
    file's shared lock while ``conn`` closes, so the close cannot take the exclusive lock a
    checkpoint needs; the read-only one closes after, and a read-only connection never
    checkpoints. (SQLite's SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE does this, but the driver does not
    reach it.)
    """
    holder = None
    with contextlib.suppress(DatabaseError, StorageError):
        holder = connect_read_only(path)
        holder.execute("BEGIN")
        holder.execute("SELECT count(*) FROM sqlite_master").fetchone()
    try:
        conn.close()
    finally:
        if holder is not None:
            holder.close()


def _read(
    conn: Connection,
    fn: Callable[Concatenate[Connection, P], T],
    /,
    *args: P.args,
    **kwargs: P.kwargs,
) -> T:
    """Run ``fn(conn, ...)`` outside any transaction, with the driver's errors translated."""
    try:
        return fn(conn, *args, **kwargs)
    except DatabaseError as exc:
        raise StorageError(f"read failed: {exc}") from exc


def _open_or_read(
    path: Path,
    *,
    synchronous: str,
    check: bool,
    schema: Schema | None,
    migrations: tuple[Migration, ...],
) -> tuple[Connection, StorageError | None]:
    """:func:`open_sync`, else (a full disk) :func:`open_for_reading` and the reason."""
    try:
        opened = open_sync(
            path, synchronous=synchronous, check=check, schema=schema, migrations=migrations
        )
        return opened, None
    except StorageError as exc:
        conn = open_for_reading(path, exc, schema, migrations)
        if unwritable(path):
            return conn, StorageError(f"{path} can only be read: it is read-only")
        return conn, StorageError(f"{path} can only be read: the disk is full or failing ({exc})")


def unwritable(path: Path) -> bool:
    """Whether the database ``path`` exists and cannot be written: its filesystem is mounted
    read-only, or this user may not write it or its folder (where SQLite makes its ``-wal``)."""
    try:
        read_only_mount = bool(os.statvfs(path.parent).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # AttributeError: no statvfs (Windows)
        read_only_mount = False
    if not path.is_file():
        return False
    return read_only_mount or not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK))


class Store:
    """One node's database, opened with its migrations applied.

    Use :meth:`open`; then ``await store.read(fn, ...)`` and ``await store.write(fn, ...)``;
    always :meth:`close`, which closes the connection and joins its thread.
    """

    def __init__(
        self,
        conn: Connection,
        executor: ThreadPoolExecutor,
        path: Path,
        read_only: StorageError | None = None,
    ) -> None:
        self._conn = conn
        self._executor = executor
        self.path = path
        self.read_only = read_only
        """Why the database can only be read (a full disk, a read-only home, a file that
        changed under a long-running process), else ``None``."""
        self.write_check: Callable[[], str | None] | None = None
        """Asked before each write, under the write lock: what happened to the database file
        that makes writing into it wrong (node/serve/database_watch.py), or ``None`` to write. Once
        it answers, the store refuses every write."""
        self._write_lock = asyncio.Lock()
        self._closed = False

    @classmethod
    async def open(
        cls,
        path: Path,
        *,
        synchronous: str = "FULL",
        check: bool = False,
        schema: Schema | None = None,
        migrations: tuple[Migration, ...] = (),
    ) -> Store:
        """Open (creating if needed) the database at ``path``, its rows of ``schema`` and its
        steps ``migrations`` after this release's (:func:`open_sync`)."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            if os.name == "posix":
                # Owner-only before SQLite opens it: SQLite gives the -wal and -shm files it
                # creates the database file's mode, and the WAL holds recent writes in full.
                os.close(os.open(path, os.O_CREAT | os.O_RDWR, 0o600))
                os.chmod(path, 0o600)
        except OSError as exc:
            if not unwritable(path):  # a database that cannot be written is still read
                raise StorageError(f"cannot create {path}: {exc.strerror}") from exc
        # Opened (and migrated, and checked) on the thread that will own it; a refused
        # database fails here, and its thread is joined before the error goes up.
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="feral-db")
        opening = partial(_open_or_read, path, synchronous=synchronous, check=check,
                          schema=schema, migrations=migrations)  # fmt: skip
        try:
            conn, read_only = await asyncio.get_running_loop().run_in_executor(executor, opening)
        except BaseException:
            executor.shutdown(wait=True)
            raise
        return cls(conn, executor, path, read_only)

    @property
    def schema(self) -> Schema:
        """The replicated schema this store's rows are read and written by."""
        return schema_of(self._conn)

    async def close(self) -> None:
        """Close the connection on its thread, then join the thread (again: a no-op).

        When :attr:`write_check` names a problem, the file at the path is not the one this
        connection wrote: it is closed without SQLite's checkpoint (:func:`close_untouched`).
        """
        if self._closed:
            return
        self._closed = True
        changed = self.write_check is not None and self.write_check() is not None
        try:
            if changed:
                await self._call(close_untouched, self._conn, self.path)
            else:
                await self._call(self._conn.close)
        finally:
            # The join waits at most for calls queued behind close: they fail at once, on a
            # closed connection, as StorageError.
            self._executor.shutdown(wait=True)

    async def _call(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """Run ``fn`` on the connection's thread (``run_in_executor`` takes no keywords)."""
        call = partial(fn, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(self._executor, call)

    async def read(
        self, fn: Callable[Concatenate[Connection, P], T], /, *args: P.args, **kwargs: P.kwargs
    ) -> T:
        """Run ``fn(conn, ...)`` outside any write transaction (WAL readers never block)."""
        return await self._call(_read, self._conn, fn, *args, **kwargs)

    async def write(
        self, fn: Callable[Concatenate[Connection, P], T], /, *args: P.args, **kwargs: P.kwargs
    ) -> T:
        """Run ``fn(conn, ...)`` as the only writer, in one ``BEGIN IMMEDIATE`` transaction.

        Raises:
            StorageError: the write failed (rolled back), or the database is open only for
                reading (a full disk: the reason it could not be opened for writing).
        """
        if self.read_only is not None:
            raise StorageError(f"cannot write: {self.read_only}")
        async with self._write_lock:
            problem = self.write_check() if self.write_check is not None else None
            if problem is not None:
                self.read_only = StorageError(problem)
                raise StorageError(f"cannot write: {problem}")
            return await self._call(run_write, self._conn, fn, *args, **kwargs)
