"""storage/memory/curation.py, listing.py and gc.py: boosts, scopes and gc replicate and
converge."""

from __future__ import annotations

from feral.storage.memory import curation, listing
from feral.storage.memory.memory_model import add_edge, read_meta
from feral.storage.search import gc
from feral.storage.search.ranking import DAY_MS
from feral.storage.store import run_write

from .support import A, B, assert_converged, export_text, sync_until_quiet


def write(replica, fn, *args, **kwargs):
    replica.time.advance()
    return run_write(replica.conn, fn, replica.node_id, replica.clock.tick, *args, **kwargs)


def test_boosts_made_apart_converge_on_the_last_and_keep_an_archive_made_elsewhere(make_replica):
    laptop, phone = make_replica("laptop", A), make_replica("phone", B)
    fact = laptop.remember("user", "likes", "green tea")["id"]
    sync_until_quiet([(laptop, phone)])
    write(laptop, curation.boost, fact, 2.0, "daily")
    phone.time.advance(60_000)  # the phone boosts a minute later
    write(phone, curation.boost, fact, 4.0, "every meal")
    phone.time.advance()
    phone.archive(fact)
    laptop.remember("user", "likes", "oolong")
    sync_until_quiet([(laptop, phone)])
    assert_converged(laptop, phone)
    listings = [
        listing.list_memories(r.conn, tier=None, scope=None, status="all", limit=9)
        for r in (laptop, phone)
    ]
    assert listings[0] == listings[1] and len(listings[0]) == 2  # same rows, same order
    for replica in (laptop, phone):
        meta = read_meta(replica.conn, fact)
        assert (meta.importance, meta.importance_note) == (4.0, "every meal")
        (row,) = listing.list_memories(
            replica.conn, tier=None, scope=None, status="archived", limit=5
        )
        assert (row["id"], row["meta"]["importance"]) == (fact, 4.0)


def test_a_scope_set_on_one_device_filters_listings_on_the_other(make_replica):
    laptop, phone = make_replica("laptop", A), make_replica("phone", B)
    kept = laptop.remember("user", "lives_in", "Porto")["id"]
    scratch = laptop.remember("user", "gate", "B12")["id"]
    write(laptop, curation.set_scope, scratch, "session:trip")
    sync_until_quiet([(laptop, phone)])
    ids = [
        r["id"]
        for r in listing.list_memories(
            phone.conn, tier="semantic", scope="session:trip", status="active", limit=9
        )
    ]
    assert ids == [scratch]
    assert listing.scope_counts(phone.conn, "user")["semantic"]["live"] == 1
    assert kept not in ids


def test_superseded_is_an_archived_row_behind_a_live_supersedes_edge(make_replica):
    laptop = make_replica("laptop", A)
    old = laptop.remember("user", "doctor", "Dr. Chen")["id"]
    new = laptop.remember("user", "doctor", "Dr. Lee")["id"]
    forgotten = laptop.remember("user", "doctor", "Dr. Who")["id"]
    write(laptop, add_edge, "supersedes", new, old, now_ms=laptop.time())
    laptop.archive(old)
    laptop.archive(forgotten)

    def ids(status: str) -> list[str]:
        rows = listing.list_memories(laptop.conn, tier=None, scope=None, status=status, limit=9)
        return [r["id"] for r in rows]

    assert ids("superseded") == [old]
    assert set(ids("archived")) == {old, forgotten}
    assert ids("active") == [new]
    assert set(ids("all")) == {old, new, forgotten}


def test_the_same_gc_on_two_devices_makes_the_same_rows(make_replica):
    laptop, phone = make_replica("laptop", A), make_replica("phone", B)
    for thing in ("figs", "dates", "plums"):
        laptop.remember("user", "likes", thing)
    sync_until_quiet([(laptop, phone)])
    options = {"ttl_days": 30, "compact_above": 2}
    _, made_here = write(laptop, gc.apply_gc, now_ms=laptop.time(), **options)
    _, made_there = write(phone, gc.apply_gc, now_ms=phone.time(), **options)
    assert made_here == made_there
    sync_until_quiet([(laptop, phone)])
    assert_converged(laptop, phone)
    plan = gc.plan_gc(phone.conn, now_ms=phone.time() + 90 * DAY_MS, **options)
    assert plan.stale == () and plan.groups == ()


def test_a_gc_plan_reads_without_writing(make_replica):
    laptop = make_replica("laptop", A)
    fact = laptop.remember("user", "gate", "B12")["id"]
    write(laptop, curation.set_scope, fact, "session:trip")
    before = export_text(laptop.conn)
    plan = gc.plan_gc(laptop.conn, now_ms=laptop.time() + 31 * DAY_MS, ttl_days=30, compact_above=5)
    assert [r["id"] for r in plan.stale] == [fact]
    assert gc.plan_distill(laptop.conn, "session:trip")[0]["id"] == fact
    assert export_text(laptop.conn) == before
