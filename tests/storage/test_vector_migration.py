"""Migration 0019: a database whose vectors sat in sqlite-vec's vec0 tables opens without the
extension and keeps every vector, as plain float32 BLOBs.

``data/vec0_vectors.db`` was written by the release before it, with sqlite-vec 0.1.9: twelve
facts, six episodes (one without words: a zero vector), one fact nuked after it was embedded (a
cleared slot in its chunk) and one remembered after that, all embedded by ``HashingEmbedder(16)``.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from feral.storage.db.connection import Connection
from feral.storage.store import open_sync, run_write
from feral.storage.vectors.vectors import (
    VECTOR_TABLES,
    embed_pending,
    embedder_in_use,
    queue_length,
    reset_vectors,
)
from feral.sync.schema import FACTS
from tests.embedders import HashingEmbedder

from .test_vectors import query

LEGACY = Path(__file__).parent / "data" / "vec0_vectors.db"
EMBEDDER = HashingEmbedder(16)


def stored(conn: Connection) -> dict[tuple[str, int], bytes]:
    return {
        (table.name, int(rowid)): bytes(blob)
        for table in VECTOR_TABLES
        for rowid, blob in conn.execute(f"SELECT rowid, embedding FROM {table.name}_vectors")
    }


@pytest.fixture
def legacy(tmp_path: Path) -> Path:
    path = tmp_path / "legacy.db"
    shutil.copy(LEGACY, path)
    return path


def test_the_vectors_of_vec0_tables_are_kept_as_they_were_made(
    legacy: Path, tmp_path: Path
) -> None:
    conn = open_sync(legacy)
    try:
        migrated = stored(conn)
        assert embedder_in_use(conn) == (EMBEDDER.name, EMBEDDER.dim)
        assert queue_length(conn) == 0  # nothing to embed again
    finally:
        conn.close()
    shutil.copy(LEGACY, tmp_path / "again.db")
    conn = open_sync(tmp_path / "again.db")
    try:  # the same rows embedded afresh by this release: the vectors it would have made
        run_write(conn, reset_vectors, EMBEDDER)
        while run_write(conn, embed_pending, EMBEDDER):
            pass
        assert migrated == stored(conn)
    finally:
        conn.close()
    assert len([key for key in migrated if key[0] == "facts"]) == 13  # the nuked one is not


def test_no_vec0_table_is_left_and_the_file_is_whole(legacy: Path) -> None:
    conn = open_sync(legacy)
    try:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        assert not {n for n in names if n.endswith("_vec") or "_vec_" in n}
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        conn.execute("VACUUM")  # copies every schema row: a vec0 one would fail here
        nearest = run_write(conn, _nearest_fact, "subject4 likes thing number 4")
        assert nearest[0][1] == pytest.approx(1.0, abs=1e-5)
    finally:
        conn.close()
    reopened = open_sync(legacy)
    reopened.close()


def _nearest_fact(conn: Connection, text: str) -> list[tuple[int, float]]:
    from feral.storage.vectors.vectors import search_similar

    return search_similar(conn, FACTS, query(EMBEDDER, text), 3)


def test_a_new_database_gets_empty_vector_tables_and_no_stand_ins(tmp_path: Path) -> None:
    conn = open_sync(tmp_path / "new.db")
    try:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert {"facts_vectors", "episodes_vectors"} <= names
        assert not {n for n in names if "_vec_" in n or n.endswith("_vec")}
        assert stored(conn) == {}
    finally:
        conn.close()


def test_a_layout_the_copy_cannot_read_queues_its_rows_to_be_embedded_again(legacy: Path) -> None:
    raw = sqlite3.connect(legacy)
    raw.execute("DROP TABLE facts_vec_rowids")  # where vec0 kept each vector's chunk and slot
    raw.commit()
    raw.close()
    conn = open_sync(legacy)
    try:
        assert not [key for key in stored(conn) if key[0] == "facts"]
        assert queue_length(conn) == 13  # the live facts; the nuked one is not
        while run_write(conn, embed_pending, EMBEDDER):
            pass
        assert len([key for key in stored(conn) if key[0] == "facts"]) == 13
        nearest = _nearest_fact(conn, "subject4 likes thing number 4")
        assert nearest[0][1] == pytest.approx(1.0, abs=1e-5)
    finally:
        conn.close()
