"""Each origin's log digest, kept with every write (storage/log_digest.py)."""

from __future__ import annotations

from feral.storage.delta_log import apply_page, changes_since
from feral.storage.log_digest import fill_missing, log_digests, updated_digest
from feral.storage.store import run_write

from .support import A, B, C, pull, sync_until_quiet

SECRET = "zanzibarquux"


def recomputed(replica) -> dict[str, bytes]:
    """Every origin's digest computed afresh from the log as it is."""
    origins = [o for (o,) in replica.conn.execute("SELECT origin FROM version_vector")]
    return {o: updated_digest(replica.conn, o, None) for o in origins}


def test_two_logs_with_the_same_entries_in_another_order_have_equal_digests(make_replica):
    a, b, c = make_replica("a", A), make_replica("b", B), make_replica("c", C)
    for n in range(5):
        a.remember("user", "likes", f"tea {n}")
        b.remember("user", "likes", f"coffee {n}")
    pull(c, a), pull(c, b)
    sync_until_quiet([(a, b), (b, c)])
    assert log_digests(a.conn) == log_digests(b.conn) == log_digests(c.conn)
    assert log_digests(c.conn) == recomputed(c)


def test_a_nuke_moves_the_digest_of_every_origin_whose_entries_it_erases(make_replica):
    a, b = make_replica("a", A), make_replica("b", B)
    row = a.remember("user", "vault_code", SECRET)
    pull(b, a)
    b.archive(row["id"])
    sync_until_quiet([(a, b)])
    before = log_digests(a.conn)
    a.nuke(row["id"])
    assert log_digests(a.conn)[B] != before[B]  # b's archive lost its words here
    assert log_digests(a.conn) == recomputed(a)
    sync_until_quiet([(a, b)])
    assert log_digests(a.conn) == log_digests(b.conn) == recomputed(b)


def test_a_repair_that_resends_entries_held_does_not_count_them_twice(make_replica):
    a, b = make_replica("a", A), make_replica("b", B)
    for n in range(4):
        a.remember("user", "likes", f"tea {n}")
    sync_until_quiet([(a, b)])
    for page in changes_since(a.conn, {}):
        run_write(b.conn, apply_page, page, now_ms=b.time(), max_skew_ms=300_000, repair=True)
    assert log_digests(b.conn) == log_digests(a.conn) == recomputed(b)


def test_a_log_from_before_digests_gets_them_at_open(make_replica):
    a = make_replica("a", A)
    a.remember("user", "likes", "tea")
    expected = log_digests(a.conn)
    a.conn.execute("UPDATE version_vector SET digest = NULL")
    fill_missing(a.conn)
    assert log_digests(a.conn) == expected
