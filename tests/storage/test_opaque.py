"""A node one schema version behind keeps, merges and relays the columns it does not know, and
no node opens a database of a newer schema (PROTOCOL §10).

The newer node here is played by the pages it sends (a fact row with one more value than this
schema has, as a node whose schema appended a nullable column writes it) or by a store opened
with that wider schema, a value: this release's stays as it was. The test with two real schema
versions side by side is tests/cli/test_mixed_versions.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from feral.storage.db.errors import NewerDatabase
from feral.storage.db.migrations import Migration
from feral.storage.log.delta_log import changes_since
from feral.storage.log.row_digest import computed_afresh, row_digest
from feral.storage.memory.export import export_lines
from feral.storage.memory.memories import commit_local
from feral.storage.store import open_sync, run_write
from feral.sync.codec import decode_page, encode_page, encode_values
from feral.sync.delta import Delta, Page
from feral.sync.errors import SchemaError
from feral.sync.hlc import pack
from feral.sync.ids import fact_id
from feral.sync.schema import BASE_SCHEMA, FACTS, SCHEMA_VERSION, Column
from feral.sync.types import RowId

from .support import T0, A, B, Replica

MakeReplica = Callable[..., Replica]


def newer_fact(hlc: int, *extra: object) -> tuple[Page, RowId]:
    """A page from A holding one fact written by a schema with columns this one lacks."""
    row_id = fact_id("the sky", "is", "blue")
    values = (row_id, "the sky", "is", "blue", 1.0, None, T0, False, *extra)
    delta = Delta("facts", row_id, hlc, A, values)  # type: ignore[arg-type]
    return decode_page(encode_page(Page(A, 0, (delta,)))), row_id


def log_payload(replica: Replica, row_id: str) -> bytes:
    row = replica.conn.execute(
        "SELECT payload FROM delta_log WHERE row_id = ? ORDER BY hlc DESC", (row_id,)
    ).fetchone()
    return bytes(row[0])


def test_unknown_columns_are_kept_with_the_row_and_relayed_byte_for_byte(
    make_replica: MakeReplica,
):
    relay, third = make_replica("relay", B), make_replica("third", A)
    page, row_id = newer_fact(pack(T0, 0), "azure", 7)
    assert relay.apply(page) == 1
    stored = relay.conn.execute("SELECT opaque FROM facts WHERE id = ?", (row_id,)).fetchone()
    assert json.loads(stored[0]) == ["azure", 7]
    sent = changes_since(relay.conn, {})
    assert [d.values for p in sent for d in p.deltas] == [page.deltas[0].values]
    assert log_payload(relay, row_id) == encode_values(page.deltas[0].values or ())
    third_page = decode_page(encode_page(sent[0]))
    third.apply(third_page)
    assert log_payload(third, row_id) == log_payload(relay, row_id)
    assert row_digest(third.conn) == row_digest(relay.conn) == computed_afresh(relay.conn)


def test_the_export_shows_the_unknown_values_in_wire_order(make_replica: MakeReplica):
    relay = make_replica("relay", B)
    page, _ = newer_fact(pack(T0, 0), "azure", None, 1.5)
    relay.apply(page)
    (line,) = [json.loads(x) for x in export_lines(relay.conn) if '"facts"' in x]
    assert line["_opaque"] == ["azure", None, 1.5]
    assert "azure" not in "".join(x for x in export_lines(relay.conn) if '"facts"' not in x)


def test_a_local_write_on_the_older_node_carries_the_unknown_values_on(
    make_replica: MakeReplica,
):
    relay = make_replica("relay", B)
    page, row_id = newer_fact(pack(T0, 0), "azure")
    relay.apply(page)
    relay.archive(row_id)
    newest = changes_since(relay.conn, {A: page.last_hlc})
    (delta,) = [d for p in newest for d in p.deltas]
    assert delta.origin == B and delta.values is not None
    assert delta.values[-2:] == (True, "azure")  # archived, and the newer column kept
    assert row_digest(relay.conn) == computed_afresh(relay.conn)


def test_lww_between_rows_of_two_schema_versions_follows_the_stamps_only(
    make_replica: MakeReplica,
):
    """The newer row loses to an older schema's later write, which carries no unknown values
    here (it was written without them): the row ends as the winner wrote it, on every node."""
    first, second = make_replica("first", B), make_replica("second", B)
    newer, row_id = newer_fact(pack(T0, 1), "azure")
    values = (row_id, "the sky", "is", "blue", 0.5, None, T0, False)
    older = Page(A, newer.last_hlc, (Delta("facts", row_id, pack(T0, 2), A, values),))
    for replica in (first, second):
        replica.apply(newer)
    first.apply(older)
    second.apply(older)
    for replica in (first, second):
        stored = replica.conn.execute("SELECT confidence, opaque FROM facts").fetchone()
        assert tuple(stored) == (0.5, None)
    assert list(export_lines(first.conn)) == list(export_lines(second.conn))


def test_a_database_of_a_newer_schema_is_refused_naming_both_versions(tmp_path: Path):
    path = tmp_path / "newer.db"
    conn = open_sync(path)
    conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (SCHEMA_VERSION + 1,))
    conn.close()
    with pytest.raises(NewerDatabase) as refused:
        open_sync(path)
    text = str(refused.value)
    assert f"schema version {SCHEMA_VERSION + 1}" in text
    assert f"this feral knows schema version {SCHEMA_VERSION}" in text
    assert "never downgrades" in text and "\n" not in text


def test_a_database_with_a_migration_unknown_here_is_refused(tmp_path: Path):
    path = tmp_path / "newer.db"
    conn = open_sync(path)
    conn.execute("INSERT INTO _migrations(name, applied_at) VALUES ('0099_from_the_future', 1)")
    conn.close()
    with pytest.raises(NewerDatabase, match="0099_from_the_future"):
        open_sync(path)
    conn = open_sync(tmp_path / "fresh.db")
    stored = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    assert stored[0] == SCHEMA_VERSION
    conn.close()


COLOR = Column("color", "text", nullable=True, max_bytes=64, added_in=SCHEMA_VERSION + 1)
NEWER = BASE_SCHEMA.with_column("facts", COLOR)
ADD_COLOR = Migration(
    "0099_test_fact_color",
    """ALTER TABLE facts ADD COLUMN color TEXT;
    UPDATE facts SET color = opaque ->> '$[0]', opaque = CASE json_array_length(opaque)
      WHEN 1 THEN NULL ELSE json_remove(opaque, '$[0]') END WHERE opaque IS NOT NULL;""",
)


@pytest.fixture
def newer_node(tmp_path: Path) -> Iterator[Replica]:
    """A node of the newer schema in this process: its store opened with that schema and its
    migration, this release's own left as it was."""
    replica = Replica.open(
        tmp_path, "newer", A, synchronous="NORMAL", schema=NEWER, migrations=(ADD_COLOR,)
    )
    yield replica
    replica.close()


def test_a_store_of_a_newer_schema_keeps_the_column_an_older_one_keeps_opaque(
    newer_node: Replica, make_replica: MakeReplica
):
    older = make_replica("older", B)
    page, row_id = newer_fact(pack(T0, 0), "azure")
    assert newer_node.apply(page) == older.apply(page) == 1
    stored = newer_node.conn.execute("SELECT color, opaque FROM facts WHERE id = ?", (row_id,))
    assert tuple(stored.fetchone()) == ("azure", None)
    assert json.loads(older.conn.execute("SELECT opaque FROM facts").fetchone()[0]) == ["azure"]
    (newer_line,) = [json.loads(x) for x in export_lines(newer_node.conn) if '"facts"' in x]
    (older_line,) = [json.loads(x) for x in export_lines(older.conn) if '"facts"' in x]
    assert newer_line["color"] == "azure" and "_opaque" not in newer_line
    assert older_line["_opaque"] == ["azure"] and "color" not in older_line
    assert row_digest(newer_node.conn) == row_digest(older.conn)
    assert row_digest(newer_node.conn) == computed_afresh(newer_node.conn)


def test_a_local_write_on_the_newer_node_keeps_the_column_its_caller_does_not_name(
    newer_node: Replica,
):
    """This release's writes name the base columns only (``FACTS``); the store of the newer
    schema carries the value of its own column on, as an older node carries an opaque one."""
    page, row_id = newer_fact(pack(T0, 0), "azure")
    newer_node.apply(page)
    newer_node.archive(row_id)
    (delta,) = [d for p in changes_since(newer_node.conn, {A: page.last_hlc}) for d in p.deltas]
    assert delta.values is not None and delta.values[-2:] == (True, "azure")
    stored = newer_node.conn.execute("SELECT archived, color FROM facts").fetchone()
    assert tuple(stored) == (1, "azure")
    assert row_digest(newer_node.conn) == computed_afresh(newer_node.conn)


def test_a_store_of_a_newer_schema_checks_its_own_column_in_a_peers_page(newer_node: Replica):
    """An older node keeps a value it cannot name as a plain one; the newer node knows the
    column, so a value that does not fit it is refused, and nothing is written."""
    page, _ = newer_fact(pack(T0, 0), "x" * 65)  # color holds at most 64 bytes
    before = list(export_lines(newer_node.conn))
    with pytest.raises(SchemaError, match="color"):
        newer_node.apply(page)
    assert list(export_lines(newer_node.conn)) == before
    assert changes_since(newer_node.conn, {}) == []


def test_a_store_of_a_newer_schema_checks_its_own_column_in_a_local_write(newer_node: Replica):
    facts = NEWER.by_name("facts")
    row_id = fact_id("the sky", "is", "blue")
    values = (row_id, "the sky", "is", "blue", 1.0, None, T0, False, 7)  # color must be text

    def stamp(floor: int) -> int:
        return max(floor + 1, pack(T0, 0))

    with pytest.raises(SchemaError, match="color"):
        run_write(newer_node.conn, commit_local, A, stamp, [(facts, RowId(row_id), values)])
    assert newer_node.conn.execute("SELECT count(*) FROM facts").fetchone()[0] == 0


def test_opening_a_newer_store_leaves_this_releases_schema_and_stores_as_they_were(
    newer_node: Replica, tmp_path: Path
):
    assert "color" not in FACTS.column_names and BASE_SCHEMA.version == SCHEMA_VERSION
    conn = open_sync(tmp_path / "base.db")
    columns = {r[1] for r in conn.execute("PRAGMA table_info(facts)")}
    stored = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    conn.close()
    assert "color" not in columns and stored[0] == SCHEMA_VERSION
    newer_node.close()
    with pytest.raises(NewerDatabase, match="0099_test_fact_color"):
        open_sync(tmp_path / "newer.db")


def test_a_snapshot_carries_the_unknown_values_of_each_row(make_replica: MakeReplica):
    """A new device taking its rows from an older node's snapshot gets the newer columns too."""
    from feral.storage.log.snapshot import apply_snapshot_page, snapshot_pages, start_snapshot

    relay, joiner = make_replica("relay", B), make_replica("joiner", A)
    page, row_id = newer_fact(pack(T0, 0), "azure", 7)
    relay.apply(page)
    pages = snapshot_pages(relay.conn, start_snapshot(relay.conn), 1000)
    sent = [d for p in pages for d in p.rows if d.row_id == row_id]
    assert [d.values for d in sent] == [page.deltas[0].values]
    with joiner.conn:
        for snapshot_page in pages:
            apply_snapshot_page(joiner.conn, snapshot_page, now_ms=T0, max_skew_ms=60_000, peer="B")
    stored = joiner.conn.execute("SELECT opaque FROM facts WHERE id = ?", (row_id,)).fetchone()
    assert json.loads(stored[0]) == ["azure", 7]
    assert row_digest(joiner.conn) == row_digest(relay.conn) == computed_afresh(joiner.conn)


def test_a_store_of_a_newer_schema_checks_its_own_column_in_a_snapshot(
    newer_node: Replica, make_replica: MakeReplica
):
    """An older relay keeps a color too long for the column as a plain value and sends it on in
    a snapshot; the newer node refuses the page, and holds nothing of it."""
    from feral.storage.log.snapshot import apply_snapshot_page, snapshot_pages, start_snapshot

    relay = make_replica("relay", B)
    relay.apply(newer_fact(pack(T0, 0), "x" * 65)[0])
    pages = snapshot_pages(relay.conn, start_snapshot(relay.conn), 1000)
    with pytest.raises(SchemaError, match="color"), newer_node.conn:
        for page in pages:
            apply_snapshot_page(newer_node.conn, page, now_ms=T0, max_skew_ms=60_000, peer="B")
    assert newer_node.conn.execute("SELECT count(*) FROM facts").fetchone()[0] == 0
