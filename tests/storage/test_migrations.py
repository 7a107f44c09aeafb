"""storage/db/migrations.py: ordered named steps, each applied atomically with its record."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from feral.storage.db.connection import Connection, connect
from feral.storage.db.errors import MigrationError
from feral.storage.db.migrations import MIGRATIONS, Migration, apply_migrations, pending
from feral.storage.store import open_sync
from feral.sync.schema import BASE_SCHEMA, SCHEMA_VERSION, TABLES, Column

NAMES = [m.name for m in MIGRATIONS]
SQL_TYPE = {"text": "TEXT", "int": "INTEGER", "real": "REAL", "bool": "INTEGER"}


@pytest.fixture
def raw(tmp_path: Path) -> Iterator[Connection]:
    """A connection to a new file with no migrations applied."""
    connection = connect(tmp_path / "feral.db")
    yield connection
    connection.close()


def schema_of(conn: Connection) -> list[tuple[str, str, str]]:
    return conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY type, name").fetchall()


def records(conn: Connection) -> list[tuple[str, int]]:
    return conn.execute("SELECT name, applied_at FROM _migrations ORDER BY rowid").fetchall()


def table_names(conn: Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_a_new_database_gets_every_migration_in_order_each_with_its_record(raw: Connection):
    times = iter(range(1000, 2000))
    assert apply_migrations(raw, now_ms=lambda: next(times)) == NAMES
    assert records(raw) == [(name, 1000 + i) for i, name in enumerate(NAMES)]
    assert not raw.in_transaction


def test_pending_lists_every_step_and_writes_nothing(raw: Connection):
    before = schema_of(raw)
    assert pending(raw) == NAMES
    assert pending(raw) == NAMES
    assert schema_of(raw) == before == []
    assert not raw.in_transaction


def test_pending_is_empty_after_apply(raw: Connection):
    apply_migrations(raw)
    assert pending(raw) == []


def test_reapplying_migrations_is_a_no_op(raw: Connection):
    apply_migrations(raw, now_ms=lambda: 1)
    before = (schema_of(raw), records(raw))
    assert apply_migrations(raw, now_ms=lambda: 2) == []
    assert (schema_of(raw), records(raw)) == before


def test_a_later_run_applies_only_the_new_steps(raw: Connection):
    assert apply_migrations(raw, MIGRATIONS[:1]) == NAMES[:1]
    assert pending(raw) == NAMES[1:]
    assert apply_migrations(raw) == NAMES[1:]
    assert [name for name, _ in records(raw)] == NAMES


def test_a_failing_step_is_named_rolled_back_and_leaves_earlier_steps_applied(raw: Connection):
    broken = Migration(
        "0002_broken",
        "CREATE TABLE partial_step (x INTEGER) STRICT;\n"
        "CREATE INDEX partial_index ON partial_step(x);\n"
        "CREATE TABLEE oops (;\n",
    )
    with pytest.raises(MigrationError, match="0002_broken") as caught:
        apply_migrations(raw, (MIGRATIONS[0], broken, MIGRATIONS[1]))
    assert caught.value.__cause__ is not None
    assert [name for name, _ in records(raw)] == [NAMES[0]]
    assert "meta" in table_names(raw)
    assert "partial_step" not in table_names(raw)
    assert "facts" not in table_names(raw)  # nothing after the failing step ran
    assert not raw.in_transaction
    # The database is usable: the real migrations still apply on top.
    assert apply_migrations(raw) == NAMES[1:]


def test_a_step_failing_at_its_record_is_rolled_back_too(raw: Connection):
    clash = Migration("0002_clash", "CREATE TABLE fine (x INTEGER);\nCREATE TABLE meta (y);\n")
    with pytest.raises(MigrationError, match="0002_clash"):
        apply_migrations(raw, (MIGRATIONS[0], clash))
    assert "fine" not in table_names(raw)
    assert pending(raw, (MIGRATIONS[0], clash)) == ["0002_clash"]


def test_statements_sharing_a_line_are_applied_one_by_one(raw: Connection):
    # Before the fix, two statements on one line reached execute() together: sqlean raised its
    # Warning ("one statement at a time"), which escaped as a raw error with the step's
    # transaction still open.
    step = Migration("0001_one_line", "CREATE TABLE x (a INTEGER); CREATE TABLE y (b TEXT);")
    assert apply_migrations(raw, (step,)) == ["0001_one_line"]
    assert {"x", "y"} <= table_names(raw)


def test_a_bad_statement_on_a_shared_line_is_a_migration_error_with_nothing_left_open(
    raw: Connection,
):
    step = Migration("0001_bad_line", "CREATE TABLE x (a INTEGER); CREATE TABLEE y (b);")
    with pytest.raises(MigrationError, match="0001_bad_line"):
        apply_migrations(raw, (step,))
    assert not raw.in_transaction
    assert "x" not in table_names(raw)


def test_trigger_bodies_with_semicolons_stay_whole(raw: Connection):
    apply_migrations(raw)
    triggers = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type='trigger'")}
    for table in TABLES:
        if table.fts:
            assert {f"{table.name}_ai", f"{table.name}_ad", f"{table.name}_au"} <= triggers
    # The embedding queue's triggers come with an embedder (storage/vectors/vectors.py), not here.
    assert not {name for name in triggers if "_embed_" in name}


@pytest.mark.parametrize("table", TABLES, ids=lambda t: t.name)
def test_the_ddl_matches_the_registry_plus_the_clock_columns(raw: Connection, table):
    apply_migrations(raw)
    info = raw.execute(f'PRAGMA table_info("{table.name}")').fetchall()
    names = tuple(row[1] for row in info)
    assert names == (*table.column_names, "hlc", "origin", "deleted", "opaque")
    by_name = {row[1]: row for row in info}
    for column in table.columns:
        _, _, sql_type, notnull, _, pk = by_name[column.name]
        assert sql_type == SQL_TYPE[column.kind], column.name
        assert bool(notnull) == (not column.nullable), column.name
        assert pk == (1 if column.name == "id" else 0), column.name
    assert [by_name[n][2:4] for n in ("hlc", "origin", "deleted")] == [
        ("INTEGER", 1),
        ("TEXT", 1),
        ("INTEGER", 1),
    ]
    strict = raw.execute(f"SELECT strict FROM pragma_table_list WHERE name = '{table.name}'")
    assert strict.fetchone() == (1,)


def test_fts_indexes_cover_exactly_the_registry_fts_columns(raw: Connection):
    apply_migrations(raw)
    for table in TABLES:
        if not table.fts:
            assert f"{table.name}_fts" not in table_names(raw)
            continue
        columns = tuple(r[1] for r in raw.execute(f"PRAGMA table_info({table.name}_fts)"))
        assert columns == table.fts


@pytest.mark.parametrize("name", [MIGRATIONS[0].name, MIGRATIONS[-1].name, "0099_twice"])
def test_a_wider_schemas_step_named_as_a_known_one_is_refused_before_the_file_is_made(
    tmp_path: Path, name: str
):
    steps = (Migration(name, "SELECT 1;"),)
    if name == "0099_twice":
        steps += steps
    with pytest.raises(MigrationError, match=f"migration {name} is already known"):
        open_sync(tmp_path / "feral.db", migrations=steps)
    assert not (tmp_path / "feral.db").exists()


def test_a_store_of_a_wider_schema_records_its_version_and_applies_its_step_last(tmp_path: Path):
    color = Column("color", "text", nullable=True, added_in=SCHEMA_VERSION + 1)
    step = Migration("0099_color", "ALTER TABLE facts ADD COLUMN color TEXT;")
    conn = open_sync(tmp_path / "feral.db", schema=BASE_SCHEMA.with_column("facts", color),
                     migrations=(step,))  # fmt: skip
    try:
        stored = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        applied = [r[0] for r in conn.execute("SELECT name FROM _migrations ORDER BY rowid")]
    finally:
        conn.close()
    assert stored[0] == SCHEMA_VERSION + 1
    assert applied == [*(m.name for m in MIGRATIONS), "0099_color"]
