"""Opening the one SQLite build feral uses everywhere, with its pragmas and sqlite-vec loaded.

Many CPython builds (pyenv's, python.org's on macOS) ship a ``sqlite3`` that cannot load
extensions, so sqlite-vec cannot load into it. feral therefore always uses ``sqlean`` (the
sqlean.py wheel): the ``sqlite3`` API with a bundled SQLite 3.50 that has FTS5 and extension
loading on every platform it ships for.

The wheel has no type information, so :class:`Connection` and :class:`Cursor` spell out the part
of the ``sqlite3`` API that storage/ uses, as protocols: every storage function takes a
``Connection``, so mypy checks each call on it, and the standard library's
``sqlite3.Connection`` satisfies the same protocol (tests/storage/test_typing.py checks both).
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeAlias

import sqlean

from .errors import CorruptDatabase, ExtensionUnavailable, StorageError

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

    def enable_load_extension(self, enabled: bool, /) -> None: ...
    def load_extension(self, path: str, /) -> None: ...

    def close(self) -> None: ...


def sqlite_version() -> str:
    """The version of the bundled SQLite library."""
    return str(sqlean.sqlite_version)


def connect(path: Path | str, *, synchronous: str = "FULL", check: bool = True) -> Connection:
    """Open a connection, set the pragmas feral relies on and load sqlite-vec.

    Args:
        path: the database file, or ``":memory:"``.
        synchronous: ``FULL`` by default, so an acknowledged write survives power loss.
        check: run ``PRAGMA quick_check`` (skipped for throwaway in-memory databases).

    Raises:
        CorruptDatabase: the file is not a database or fails the check.
        ExtensionUnavailable: sqlite-vec cannot be loaded.
    """
    try:
        conn: Connection = sqlean.connect(str(path), isolation_level=None, check_same_thread=False)
    except DatabaseError as exc:
        raise StorageError(f"cannot open database {path}: {exc}") from exc
    try:
        _load_vec(conn)
        _set_pragmas(conn, synchronous)
        if check:
            _quick_check(conn, path)
    except Exception:
        conn.close()
        raise
    return conn


def connect_immutable(path: Path) -> Connection:
    """Open ``path`` read-only as an immutable file: no lock, no ``-wal`` or ``-shm`` file.

    Only for a database whose WAL is empty (storage/store.py's ``open_for_reading``): SQLite
    then reads the file alone, which holds every committed write.
    """
    uri = f"{path.resolve().as_uri()}?mode=ro&immutable=1"
    try:
        conn: Connection = sqlean.connect(
            uri, uri=True, isolation_level=None, check_same_thread=False
        )
        _load_vec(conn)
        conn.execute("PRAGMA trusted_schema = OFF")
    except DatabaseError as exc:
        raise StorageError(f"cannot open database {path} for reading: {exc}") from exc
    return conn


def connect_read_only(path: Path) -> Connection:
    """Open ``path`` read-only with its WAL (locks taken as any reader's; no extension, no
    migration): for a read that must never write the file, checkpoints included."""
    uri = f"{path.resolve().as_uri()}?mode=ro"
    try:
        conn: Connection = sqlean.connect(
            uri, uri=True, isolation_level=None, check_same_thread=False
        )
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


@functools.cache
def _vec_extension() -> str:
    """The sqlite-vec loadable extension: ``vec0`` beside the package's ``__init__``, the file
    ``sqlite_vec.load`` loads. Found without importing the package, whose ``__init__`` imports
    numpy for a helper feral does not use: a fifth of every command's start-up."""
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or spec.origin is None:
        raise ExtensionUnavailable("the sqlite-vec package is not installed")
    return str(Path(spec.origin).parent / "vec0")


def _load_vec(conn: Connection) -> None:
    try:
        conn.enable_load_extension(True)
        conn.load_extension(_vec_extension())
        conn.enable_load_extension(False)
    except (AttributeError, DatabaseError) as exc:
        raise ExtensionUnavailable(
            f"cannot load sqlite-vec into SQLite {sqlite_version()}: {exc}"
        ) from exc


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
