"""Opening the one SQLite build feral uses everywhere, with its pragmas.

feral always uses ``sqlean`` (the sqlean.py wheel): the ``sqlite3`` API with a bundled SQLite
3.50 that has FTS5 on every platform it ships for. The platform's own SQLite is often older than
3.44, whose FTS5 first takes the ``secure-delete`` option that erasing relies on (migrations
0007 and 0018), and some builds of it leave FTS5 out.

The wheel has no type information, so :class:`Connection` and :class:`Cursor` spell out the part
of the ``sqlite3`` API that storage/ uses, as protocols: every storage function takes a
``Connection``, so mypy checks each call on it, and the standard library's
``sqlite3.Connection`` satisfies the same protocol (tests/storage/test_typing.py checks both).

A connection feral opens also carries the replicated schema its store was opened with
(:func:`schema_of`): storage builds its statements from that schema, not from a registry.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeAlias

import sqlean

from feral.sync.schema import BASE_SCHEMA, Schema

from .errors import CorruptDatabase, StorageError

__all__ = [
    "BUSY_TIMEOUT_MS",
    "Connection",
    "Cursor",
    "DatabaseError",
    "Parameters",
    "connect",
    "connect_immutable",
    "connect_read_only",
    "out_of_space",
    "schema_of",
    "sqlite_version",
]

BUSY_TIMEOUT_MS = 5_000
DatabaseError = sqlean.DatabaseError
"""The base class of errors raised by the SQLite driver (re-exported for translation)."""

Parameters: TypeAlias = Sequence[Any] | Mapping[str, Any]
"""Values bound to a statement's ``?`` (a sequence) or ``:name`` (a mapping) placeholders."""


class Cursor(Protocol):
    """What a statement returns: its rows, as tuples (no ``row_factory`` is ever set)."""

    @property
    def rowcount(self) -> int:
        """Rows changed by an ``INSERT``/``UPDATE``/``DELETE`` (``-1`` when SQLite cannot say)."""
        ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """The part of the ``sqlite3.Connection`` API storage/ uses (sqlean's is the same API).

    Transactions are explicit: connections are opened with ``isolation_level=None`` and every
    write runs between ``BEGIN IMMEDIATE`` and ``COMMIT`` (storage/store.py), so ``commit()``
    is not part of it.
    """

    @property
    def in_transaction(self) -> bool: ...

    def execute(self, sql: str, parameters: Parameters = ..., /) -> Cursor: ...

    def executemany(self, sql: str, parameters: Iterable[Parameters], /) -> Cursor: ...

    def close(self) -> None: ...


class _SchemaConnection(sqlean.Connection):  # type: ignore[misc]  # sqlean has no types
    """A driver connection that knows the replicated schema of the store it opens."""

    schema: Schema = BASE_SCHEMA


def schema_of(conn: Connection) -> Schema:
    """The replicated schema ``conn``'s store was opened with (:func:`connect`'s ``schema``);
    this release's for a connection made another way (the standard library's, in a test)."""
    schema = getattr(conn, "schema", None)
    return schema if isinstance(schema, Schema) else BASE_SCHEMA


def _open(database: str, *, uri: bool, schema: Schema) -> Connection:
    conn: _SchemaConnection = sqlean.connect(
        database, uri=uri, isolation_level=None, check_same_thread=False,
        factory=_SchemaConnection,
    )  # fmt: skip
    conn.schema = schema
    return conn


def sqlite_version() -> str:
    """The version of the bundled SQLite library."""
    return str(sqlean.sqlite_version)


def connect(
    path: Path | str,
    *,
    synchronous: str = "FULL",
    check: bool = True,
    schema: Schema = BASE_SCHEMA,
) -> Connection:
    """Open a connection and set the pragmas feral relies on.

    Args:
        path: the database file, or ``":memory:"``.
        schema: the replicated schema of the rows it holds (:func:`schema_of`).
        synchronous: ``FULL`` by default, so an acknowledged write survives power loss.
        check: run ``PRAGMA quick_check`` (skipped for throwaway in-memory databases).

    Raises:
        CorruptDatabase: the file is not a database or fails the check.
    """
    try:
        conn = _open(str(path), uri=False, schema=schema)
    except DatabaseError as exc:
        raise StorageError(f"cannot open database {path}: {exc}") from exc
    try:
        _set_pragmas(conn, synchronous)
        if check:
            _quick_check(conn, path)
    except Exception:
        conn.close()
        raise
    return conn


def connect_immutable(path: Path, schema: Schema = BASE_SCHEMA) -> Connection:
    """Open ``path`` read-only as an immutable file: no lock, no ``-wal`` or ``-shm`` file.

    Only for a database whose WAL is empty (storage/store.py's ``open_for_reading``): SQLite
    then reads the file alone, which holds every committed write.
    """
    uri = f"{path.resolve().as_uri()}?mode=ro&immutable=1"
    try:
        conn = _open(uri, uri=True, schema=schema)
        conn.execute("PRAGMA trusted_schema = OFF")
    except DatabaseError as exc:
        raise StorageError(f"cannot open database {path} for reading: {exc}") from exc
    return conn


def connect_read_only(path: Path, schema: Schema = BASE_SCHEMA) -> Connection:
    """Open ``path`` read-only with its WAL (locks taken as any reader's; no pragma, no
    migration): for a read that must never write the file, checkpoints included."""
    uri = f"{path.resolve().as_uri()}?mode=ro"
    try:
        conn = _open(uri, uri=True, schema=schema)
    except DatabaseError as exc:
        raise StorageError(f"cannot open database {path} for reading: {exc}") from exc
    return conn


_SQLITE_IOERR, _SQLITE_FULL = 10, 13


def out_of_space(error: BaseException) -> bool:
    """Whether ``error`` (or what caused it) is SQLite's full disk or failed I/O.

    A full filesystem shows as ``SQLITE_FULL`` on a write, and as ``SQLITE_IOERR`` when the
    shared-memory file of a WAL database cannot be made; extended codes keep the primary one
    in their low byte.
    """
    cause: BaseException | None = error
    while cause is not None:
        code = getattr(cause, "sqlite_errorcode", None)
        if isinstance(code, int) and code & 0xFF in (_SQLITE_IOERR, _SQLITE_FULL):
            return True
        cause = cause.__cause__
    return False


def _set_pragmas(conn: Connection, synchronous: str) -> None:
    if synchronous not in ("FULL", "NORMAL", "EXTRA"):
        raise StorageError(f"unsupported synchronous mode {synchronous!r}")
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute(f"PRAGMA synchronous = {synchronous}")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA trusted_schema = OFF")
        # Freed cells and pages are zeroed, so a nuked row's words do not linger in the file's
        # free space (storage/log/erase.py).
        conn.execute("PRAGMA secure_delete = ON")
    except DatabaseError as exc:
        raise CorruptDatabase(f"cannot use the database: {exc}") from exc


def _quick_check(conn: Connection, path: Path | str) -> None:
    try:
        rows = conn.execute("PRAGMA quick_check").fetchall()
    except DatabaseError as exc:
        raise CorruptDatabase(f"{path} is not a usable database: {exc}") from exc
    if rows != [("ok",)]:
        problems = "; ".join(str(r[0]) for r in rows[:3])
        raise CorruptDatabase(f"{path} failed its integrity check: {problems}")
