"""Schema migrations: the runner and registry of the ordered named steps, each applied with its
record atomically (sqlite-utils style).

The steps themselves, frozen DDL text, are in :mod:`feral.storage.db.schema_steps`; this module
decides which are pending, applies them one transaction each (a wider schema's steps after
this release's), and refuses a database a newer feral wrote.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import sqlean

from .connection import Connection, DatabaseError
from .errors import MigrationError, NewerDatabase
from .schema_steps import MIGRATIONS, Migration

__all__ = [
    "MIGRATIONS",
    "Migration",
    "and_extension",
    "apply_migrations",
    "pending",
    "record_schema_version",
    "refuse_newer",
]


def and_extension(extension: tuple[Migration, ...]) -> tuple[Migration, ...]:
    """This release's migrations, then ``extension``'s: the steps of a wider schema a store is
    opened with (``BASE_SCHEMA.with_column``, docs/PROTOCOL.md §10). A name already known is
    refused, as is a name given twice."""
    known = {m.name for m in MIGRATIONS}
    for migration in extension:
        if migration.name in known:
            raise MigrationError(f"migration {migration.name} is already known")
        known.add(migration.name)
    return (*MIGRATIONS, *extension)


def _ensure_record_table(conn: Connection) -> None:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS _migrations ("
        "name TEXT PRIMARY KEY NOT NULL, applied_at INTEGER NOT NULL) STRICT"
    )


def _applied(conn: Connection) -> set[str]:
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_migrations'"
    ).fetchone()
    if not exists:
        return set()
    return {row[0] for row in conn.execute("SELECT name FROM _migrations")}


def pending(conn: Connection, migrations: tuple[Migration, ...] | None = None) -> list[str]:
    """Names of the migrations not yet applied, in order. Read-only."""
    done = _applied(conn)
    return [m.name for m in migrations or MIGRATIONS if m.name not in done]


def refuse_newer(
    conn: Connection, schema_version: int, migrations: tuple[Migration, ...] | None = None
) -> None:
    """Refuse a database a newer feral wrote: one with migrations this code does not know
    (``migrations``, by default :data:`MIGRATIONS`), or a replicated schema above
    ``schema_version``. Opening it would read rows by a schema it does not have, and migrating
    it cannot go backwards. Read-only.

    Raises:
        NewerDatabase: naming the database's schema version and this code's.
    """
    known = {m.name for m in migrations or MIGRATIONS}
    unknown = sorted(_applied(conn) - known)
    stored = _stored_schema_version(conn)
    if not unknown and stored <= schema_version:
        return
    steps = f", with migrations unknown here: {', '.join(unknown)}" if unknown else ""
    raise NewerDatabase(
        f"this database was written by a newer version of feral (schema version {stored}"
        f"{steps}); this feral knows schema version {schema_version} and never downgrades a "
        "database: upgrade feral to open it"
    )


def _stored_schema_version(conn: Connection) -> int:
    has_meta = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
    ).fetchone()
    if not has_meta:
        return 0
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return int(row[0]) if row is not None and type(row[0]) is int else 0


def record_schema_version(conn: Connection, schema_version: int) -> None:
    """Note in ``meta`` the replicated schema this database now holds (a write only when it
    changed), so an older feral refuses it (:func:`refuse_newer`)."""
    if _stored_schema_version(conn) != schema_version:
        conn.execute(
            "INSERT INTO meta(key, value) VALUES ('schema_version', ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (schema_version,),
        )


def apply_migrations(
    conn: Connection,
    migrations: tuple[Migration, ...] | None = None,
    now_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000,
) -> list[str]:
    """Apply every pending migration in order, each in its own ``BEGIN IMMEDIATE`` transaction.

    Returns:
        The names applied now.

    Raises:
        MigrationError: naming the step; that step is rolled back, earlier ones stay.
    """
    applied: list[str] = []
    migrations = migrations or MIGRATIONS
    if not pending(conn, migrations):
        return applied  # read-only: no write lock, and a full disk still opens
    for migration in migrations:
        conn.execute("BEGIN IMMEDIATE")
        try:
            _ensure_record_table(conn)
            if migration.name in _applied(conn):
                conn.execute("ROLLBACK")
                continue
            for statement in _statements(migration.sql):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO _migrations(name, applied_at) VALUES (?, ?)",
                (migration.name, now_ms()),
            )
            conn.execute("COMMIT")
        except (DatabaseError, sqlean.Warning) as exc:
            if conn.in_transaction:  # SQLite may have rolled back already (a full disk)
                conn.execute("ROLLBACK")
            raise MigrationError(f"migration {migration.name} failed: {exc}") from exc
        applied.append(migration.name)
    return applied


def _statements(sql: str) -> list[str]:
    """Split a migration into complete statements (trigger bodies contain semicolons).

    Splits after every ``;`` that ends a complete statement, so two statements sharing a line
    are still executed one at a time.
    """
    statements: list[str] = []
    buffer = ""
    for piece in re.split(r"(?<=;)", sql):
        buffer += piece
        if sqlean.complete_statement(buffer):
            if buffer.strip():
                statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements
