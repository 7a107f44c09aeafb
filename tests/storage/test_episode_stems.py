"""Migration 0018: the episodes' full-text index finds words by their stem (issue 25)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from feral.storage.db.connection import Connection, connect
from feral.storage.db.migrations import MIGRATIONS, apply_migrations

BEFORE = tuple(m for m in MIGRATIONS if m.name < "0018")


@pytest.fixture
def raw(tmp_path: Path) -> Iterator[Connection]:
    connection = connect(tmp_path / "feral.db")
    yield connection
    connection.close()


def _add(conn: Connection, row_id: str, summary: str) -> None:
    conn.execute(
        "INSERT INTO episodes (id, session_id, summary, entities, created_at, archived, hlc, "
        "origin, deleted) VALUES (?, 's', ?, '[]', 1, 0, 1, 'n', 0)",
        (row_id, summary),
    )


def _matching(conn: Connection, word: str) -> list[str]:
    rows = conn.execute(
        "SELECT e.id FROM episodes_fts f JOIN episodes e ON e.rowid = f.rowid "
        "WHERE episodes_fts MATCH ? ORDER BY e.id",
        (f'"{word}"',),
    )
    return [r[0] for r in rows]


def test_episodes_written_before_the_migration_are_found_by_their_stem(raw: Connection):
    apply_migrations(raw, BEFORE)
    _add(raw, "old", "Caroline started researching adoption agencies")
    raw.commit()
    assert _matching(raw, "research") == []  # exact words only, before
    apply_migrations(raw)
    _add(raw, "new", "Melanie researched pottery classes")
    raw.commit()
    assert _matching(raw, "research") == ["new", "old"]
    assert _matching(raw, "agency") == ["old"]


def test_an_edited_or_deleted_episode_leaves_no_stale_words(raw: Connection):
    apply_migrations(raw)
    _add(raw, "e1", "painting sunsets by the lake")
    raw.execute("UPDATE episodes SET summary = 'baking bread' WHERE id = 'e1'")
    raw.commit()
    assert _matching(raw, "paint") == [] and _matching(raw, "bake") == ["e1"]
    raw.execute("DELETE FROM episodes WHERE id = 'e1'")
    raw.commit()
    assert _matching(raw, "bake") == []
