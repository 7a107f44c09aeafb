"""storage/memory/export.py: the convergence oracle, sorted JSON Lines of every replicated row."""

from __future__ import annotations

import hashlib
import json

import pytest

from feral.storage.memory.export import export_lines, state_digest
from feral.storage.store import open_sync, run_write
from feral.storage.vectors.vectors import embed_pending
from feral.sync.schema import TABLES
from tests.embedders import HashingEmbedder

from .support import A, Replica, export_text


@pytest.fixture
def a(make_replica) -> Replica:
    replica = make_replica("a", A)
    replica.remember("Zed", "is", "last")
    replica.remember("Amy", "is", "first", confidence=0.5)
    gone = replica.remember("secret", "is", "gone")
    replica.nuke(gone["id"])
    kept = replica.episode("walked the dog", ["dog"])
    replica.archive(kept["id"])
    replica.execution("calendar")
    return replica


def test_every_line_is_one_sorted_json_object_ending_in_a_newline(a: Replica):
    lines = list(export_lines(a.conn))
    assert len(lines) == 5
    for line in lines:
        assert line.endswith("\n") and line.count("\n") == 1
        row = json.loads(line)
        assert list(row) == sorted(row)
        compact = json.dumps(row, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        assert line == compact + "\n"


def test_lines_are_ordered_by_table_then_id(a: Replica):
    keys = [(r["table"], r["id"]) for r in map(json.loads, export_lines(a.conn))]
    assert keys == sorted(keys)
    assert [k[0] for k in keys] == ["episodes", "exec_log", "facts", "facts", "facts"]


def test_each_line_holds_exactly_the_replicated_columns_and_the_clock_fields(a: Replica):
    for row in map(json.loads, export_lines(a.conn)):
        table = next(t for t in TABLES if t.name == row["table"])
        assert set(row) == {*table.column_names, "hlc", "origin", "deleted", "table"}
        assert "rowid" not in row and "tier" not in row


def test_tombstones_are_exported(a: Replica):
    (tomb,) = [r for r in map(json.loads, export_lines(a.conn)) if r["deleted"]]
    assert (tomb["table"], tomb["subject"], tomb["object"]) == ("facts", "", "")


def test_the_export_is_deterministic_and_the_digest_is_its_sha256(a: Replica):
    text = export_text(a.conn)
    assert export_text(a.conn) == text
    assert state_digest(a.conn) == hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_derived_data_never_changes_the_export(a: Replica):
    digest = state_digest(a.conn)
    while run_write(a.conn, embed_pending, HashingEmbedder(16)):
        pass
    run_write(a.conn, lambda c: c.execute("INSERT INTO facts_fts(facts_fts) VALUES ('rebuild')"))
    assert state_digest(a.conn) == digest


def test_closing_and_reopening_the_database_gives_the_same_export(a: Replica, tmp_path):
    text = export_text(a.conn)
    a.close()
    reopened = open_sync(tmp_path / "a.db")
    try:
        assert export_text(reopened) == text
    finally:
        reopened.close()
    a.conn = open_sync(tmp_path / "a.db")  # the fixture closes it


def test_any_change_to_a_row_changes_the_digest(a: Replica):
    digest = state_digest(a.conn)
    row = a.remember("Amy", "is", "first")
    a.archive(row["id"])
    assert state_digest(a.conn) != digest


def test_non_ascii_text_is_exported_as_is(make_replica):
    b = make_replica("b", A)
    b.remember("Café", "sert", "crème brûlée ☕")
    assert "crème brûlée ☕" in export_text(b.conn)


def test_an_empty_database_exports_nothing(conn):
    assert export_text(conn) == ""
    assert state_digest(conn) == hashlib.sha256(b"").hexdigest()
