"""storage/memory/memory_model.py: meta rows, edges and entities replicate and merge like the
tiers."""

from __future__ import annotations

import pytest

from feral.storage.memory.memory_model import (
    Meta,
    add_edge,
    add_entity,
    edges_of,
    read_meta,
    write_meta,
)
from feral.storage.store import run_write
from feral.sync.ids import edge_id, entity_id

from .support import A, B, assert_converged, export_text, sync_until_quiet


def test_a_memory_without_a_meta_row_has_the_defaults_updated_when_it_was_created(conn):
    meta = read_meta(conn, "f-missing", created_at=42)
    assert (meta.category, meta.scope, meta.importance, meta.updated_at) == (
        "note",
        "user",
        1.0,
        42,
    )


def test_the_same_edge_made_on_two_devices_is_one_row_after_sync(make_replica):
    laptop, phone = make_replica("laptop", A), make_replica("phone", B)
    old = laptop.remember("user", "doctor", "Dr. Chen")["id"]
    new = laptop.remember("user", "doctor", "Dr. Lee")["id"]
    sync_until_quiet([(laptop, phone)])
    for replica in (laptop, phone):
        replica.time.advance()
        run_write(
            replica.conn,
            add_edge,
            replica.node_id,
            replica.clock.tick,
            "supersedes",
            new,
            old,
            now_ms=replica.time(),
        )
    sync_until_quiet([(laptop, phone)])
    assert_converged(laptop, phone)
    edges = edges_of(phone.conn, old)
    assert [e["id"] for e in edges] == [edge_id("supersedes", new, old)]
    assert (edges[0]["from_id"], edges[0]["to_id"]) == (new, old)


def test_a_boost_and_an_entity_replicate_and_names_dedupe_by_normalised_form(make_replica):
    laptop, phone = make_replica("laptop", A), make_replica("phone", B)
    fact = laptop.remember("user", "likes", "green tea")["id"]
    laptop.time.advance()
    run_write(
        laptop.conn,
        write_meta,
        laptop.node_id,
        laptop.clock.tick,
        Meta(fact, category="preference", importance=2.0, importance_note="asked", updated_at=7),
    )
    for replica, spelling in ((laptop, "Berlin"), (phone, "  berlin ")):
        replica.time.advance()
        run_write(
            replica.conn,
            add_entity,
            replica.node_id,
            replica.clock.tick,
            "Place",
            spelling,
            now_ms=replica.time(),
        )
    sync_until_quiet([(laptop, phone)])
    assert_converged(laptop, phone)
    meta = read_meta(phone.conn, fact)
    assert (meta.category, meta.importance, meta.importance_note) == ("preference", 2.0, "asked")
    count = phone.conn.execute("SELECT count(*) FROM entities WHERE deleted = 0").fetchone()[0]
    assert count == 1
    assert entity_id("place", "BERLIN") == entity_id("Place", "berlin")


def test_unknown_categories_and_edge_types_are_refused_before_anything_is_written(conn):
    with pytest.raises(ValueError, match="unknown category"):
        write_meta(conn, A, lambda floor: floor + 1, Meta("f1", category="gossip"))
    with pytest.raises(ValueError, match="unknown edge type"):
        add_edge(conn, A, lambda floor: floor + 1, "likes", "f1", "f2", now_ms=1)
    assert conn.execute("SELECT count(*) FROM delta_log").fetchone()[0] == 0


def test_a_nuke_erases_the_memorys_meta_row_and_its_edges_everywhere(make_replica):
    """A boost's reason and an edge's note are the user's words about the memory: a nuke that
    left them would not erase (issue 11's rule, for issue 14's tables)."""
    laptop, phone = make_replica("laptop", A), make_replica("phone", B)
    doomed = laptop.remember("user", "diagnosis", "something private")["id"]
    other = laptop.remember("user", "doctor", "Dr. Chen")["id"]
    laptop.time.advance()
    run_write(
        laptop.conn,
        write_meta,
        laptop.node_id,
        laptop.clock.tick,
        Meta(doomed, category="context", importance=3.0, importance_note="the biopsy result"),
    )
    laptop.time.advance()
    run_write(
        laptop.conn,
        add_edge,
        laptop.node_id,
        laptop.clock.tick,
        "related_to",
        other,
        doomed,
        now_ms=laptop.time(),
        note="told Dr. Chen about the biopsy",
    )
    sync_until_quiet([(laptop, phone)])
    phone.nuke(doomed)
    sync_until_quiet([(laptop, phone)])
    assert_converged(laptop, phone)
    for replica in (laptop, phone):
        text = export_text(replica.conn)
        assert "biopsy" not in text and "something private" not in text
        payloads = replica.conn.execute("SELECT payload FROM delta_log").fetchall()
        assert not any(p[0] is not None and b"biopsy" in p[0] for p in payloads)
        assert edges_of(replica.conn, doomed) == []
        assert read_meta(replica.conn, doomed).importance == 1.0
