"""Opening the one SQLite build feral uses everywhere, with its pragmas and sqlite-vec loaded.

Many CPython builds (pyenv's, python.org's on macOS) ship a ``sqlite3`` that cannot load
extensions, so sqlite-vec cannot load into it. feral therefore always uses ``sqlean`` (the
sqlean.py wheel): the ``sqlite3`` API with a bundled SQLite 3.50 that has FTS5 and extension
loading on every platform it ships for. It is handed to aiosqlite as its connector.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlean
import sqlite_vec

from .errors import CorruptDatabase, ExtensionUnavailable, StorageError

__all__ = ["BUSY_TIMEOUT_MS", "DatabaseError", "connect", "sqlite_version"]

BUSY_TIMEOUT_MS = 5_000
DatabaseError = sqlean.DatabaseError
"""The base class of errors raised by the SQLite driver (re-exported for translation)."""

Connection = Any  # sqlean.Connection: the sqlite3.Connection API, untyped in the wheel


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
        conn = sqlean.connect(str(path), isolation_level=None, check_same_thread=False)
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


def _load_vec(conn: Connection) -> None:
    try:
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
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
