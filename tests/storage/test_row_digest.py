"""The row digest kept with every write (storage/log/row_digest.py)."""

from __future__ import annotations

from feral.storage.log.delta_log import apply_page, changes_since
from feral.storage.log.row_digest import computed_afresh, fill_missing, row_digest
from feral.storage.store import run_write

from .support import A, B, C, export_text, pull, sync_until_quiet

SECRET = "zanzibarquux"


def test_nodes_holding_the_same_rows_have_equal_digests_whatever_the_order(make_replica):
    a, b, c = make_replica("a", A), make_replica("b", B), make_replica("c", C)
    for n in range(5):
        a.remember("user", "likes", f"tea {n}")
        b.remember("user", "likes", f"coffee {n}")
    pull(c, a), pull(c, b)
    sync_until_quiet([(a, b), (b, c)])
    assert row_digest(a.conn) == row_digest(b.conn) == row_digest(c.conn)
    assert row_digest(c.conn) == computed_afresh(c.conn)


def test_a_write_that_changes_a_row_moves_the_digest_and_one_that_loses_does_not(make_replica):
    a, b = make_replica("a", A), make_replica("b", B)
    row = a.remember("user", "likes", "tea")
    sync_until_quiet([(a, b)])
    before = row_digest(a.conn)
    a.archive(row["id"])
    assert row_digest(a.conn) != before and row_digest(a.conn) == computed_afresh(a.conn)
    sync_until_quiet([(a, b)])
    assert row_digest(b.conn) == row_digest(a.conn) == computed_afresh(b.conn)


def test_a_nuke_after_a_newer_write_leaves_equal_rows_and_equal_digests(make_replica):
    """Two honest logs can differ in the payloads a nuke erased (an entry older than a tombstone
    that lost to a newer write); their rows, and so their digests, are equal."""
    a, b, c = make_replica("a", A), make_replica("b", B), make_replica("c", C)
    row = a.remember("user", "vault_code", SECRET)
    first = [p for p in changes_since(a.conn, {}) if p.origin == A]
    a.nuke(row["id"])
    b.time.advance(10_000)
    for page in first:
        b.apply(page)
    b.archive(row["id"])  # newer than the nuke
    for page in changes_since(a.conn, {}):
        c.apply(page)
    for page in changes_since(b.conn, {}):
        if page.origin == B:
            c.apply(page)
    sync_until_quiet([(a, b), (b, c)])
    assert export_text(a.conn) == export_text(b.conn) == export_text(c.conn)
    assert row_digest(a.conn) == row_digest(b.conn) == row_digest(c.conn)


def test_a_repair_that_resends_entries_held_leaves_the_digest_right(make_replica):
    a, b = make_replica("a", A), make_replica("b", B)
    for n in range(4):
        a.remember("user", "likes", f"tea {n}")
    sync_until_quiet([(a, b)])
    for page in changes_since(a.conn, {}):
        run_write(b.conn, apply_page, page, now_ms=b.time(), max_skew_ms=300_000, repair=True)
    assert row_digest(b.conn) == row_digest(a.conn) == computed_afresh(b.conn)


def test_a_database_from_before_the_digest_gets_it_at_open(make_replica):
    a = make_replica("a", A)
    a.remember("user", "likes", "tea")
    expected = row_digest(a.conn)
    a.conn.execute("DELETE FROM meta WHERE key = 'row_digest'")
    assert row_digest(a.conn) == expected  # computed on the spot meanwhile
    fill_missing(a.conn)
    assert a.conn.execute("SELECT 1 FROM meta WHERE key = 'row_digest'").fetchone()
    assert row_digest(a.conn) == expected
