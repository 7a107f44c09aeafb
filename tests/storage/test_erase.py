"""A nuke erases the row's words from the log, here and on every peer (storage/log/erase.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from feral.storage.log.delta_log import changes_since, log_entry_counts, version_vector
from feral.storage.log.erase import finish_erasing
from feral.storage.memory.memories import find_row
from feral.sync.types import NodeId

from .support import A, B, C, Replica, all_deltas, export_text, pull, sync_until_quiet

SECRET = "zanzibarquux"
D = NodeId("d" * 32)


def payloads_holding(replica, word: str) -> int:
    rows = replica.conn.execute("SELECT payload FROM delta_log WHERE payload IS NOT NULL")
    return sum(word.encode() in bytes(payload) for (payload,) in rows)


def nuked_here_archived_there(make_replica) -> tuple[Replica, Replica, Replica, str]:
    """a's write of the secret, which b nukes and d, not having heard of it, archives a second
    later: the three replicas (a holding neither the nuke nor the archive yet) and the row."""
    a, b, d = (make_replica(n, i) for n, i in (("a", A), ("b", B), ("d", D)))
    row = a.remember("user", "vault_code", SECRET)
    pull(b, a)
    pull(d, a)
    b.nuke(row["id"])
    d.time.advance(1_000)
    d.archive(row["id"])
    return a, b, d, row["id"]


def test_a_nuke_drops_the_words_from_every_earlier_entry_of_its_row(make_replica):
    a, b = make_replica("a", A), make_replica("b", B)
    row = a.remember("user", "vault_code", SECRET)
    pull(b, a)
    b.archive(row["id"])
    pull(a, b)
    counts = log_entry_counts(a.conn)
    a.nuke(row["id"])
    assert payloads_holding(a, SECRET) == 0
    # Every entry keeps its place: the log stays gap-free and the counts still balance.
    assert log_entry_counts(a.conn) == {**counts, A: counts[A] + 1}
    assert [d.values for d in all_deltas(a.conn) if d.row_id == row["id"]] == [None, None, None]
    assert finish_erasing(a.conn) == [row["id"]]
    assert finish_erasing(a.conn) == []


def test_a_node_that_applies_a_remote_tombstone_erases_the_same_way(make_replica):
    a, b = make_replica("a", A), make_replica("b", B)
    row = a.remember("user", "vault_code", SECRET)
    sync_until_quiet([(a, b)])
    assert payloads_holding(b, SECRET) == 1
    a.nuke(row["id"])
    sync_until_quiet([(a, b)])
    assert payloads_holding(b, SECRET) == 0
    assert export_text(a.conn) == export_text(b.conn)
    assert SECRET not in export_text(b.conn)


def test_an_outdated_write_arriving_after_the_tombstone_is_logged_as_a_tombstone(make_replica):
    a, b, c = make_replica("a", A), make_replica("b", B), make_replica("c", C)
    row = a.remember("user", "vault_code", SECRET)
    sync_until_quiet([(a, b)])
    b.archive(row["id"])  # b's write, which c will hear of only after the nuke
    stale = [page for page in changes_since(b.conn, {}) if page.origin == B]
    sync_until_quiet([(a, b)])
    a.nuke(row["id"])
    for page in changes_since(a.conn, {}):  # c learns a's own log first: created, then nuked
        if page.origin == A:
            c.apply(page)
    for page in stale:  # then b's archive, from a copy made before the nuke
        c.apply(page)
    assert payloads_holding(c, SECRET) == 0
    sync_until_quiet([(a, b), (b, c)])
    assert export_text(a.conn) == export_text(b.conn) == export_text(c.conn)
    assert version_vector(a.conn) == version_vector(c.conn)
    assert log_entry_counts(a.conn) == log_entry_counts(c.conn)
    assert all(payloads_holding(r, SECRET) == 0 for r in (a, b, c))


def test_an_entry_erased_here_is_no_collision_when_a_peer_sends_it_with_its_words(make_replica):
    from feral.storage.log.integrity import find_collisions

    a, b = make_replica("a", A), make_replica("b", B)
    row = a.remember("user", "vault_code", SECRET)
    sync_until_quiet([(a, b)])
    before_nuke = [d for page in changes_since(b.conn, {}) for d in page.deltas]
    a.nuke(row["id"])
    # b's copy, sent before it heard of the nuke, holds the words a has since erased.
    assert find_collisions(a.conn, A, before_nuke) == []


def test_an_entry_erased_here_is_no_collision_either_once_its_row_was_written_again(make_replica):
    """Nuked, then remembered again: the row is live once more, and the copy a peer sends from
    before the nuke is still the erased write, not a forgery (an honest pair raised an
    integrity alarm here, and status showed them out of sync for good)."""
    from feral.storage.log.integrity import find_collisions

    a, b = make_replica("a", A), make_replica("b", B)
    row = a.remember("user", "vault_code", SECRET)
    sync_until_quiet([(a, b)])
    before_nuke = [d for page in changes_since(b.conn, {}) for d in page.deltas]
    a.nuke(row["id"])
    a.remember("user", "vault_code", SECRET)
    assert find_collisions(a.conn, A, before_nuke) == []
    erased = [replace(d, values=None) for d in before_nuke]  # a peer's copy that erased too
    assert find_collisions(a.conn, A, erased) == []


def test_an_alarm_for_a_copy_erased_by_a_nuke_not_heard_of_yet_is_withdrawn_with_it(make_replica):
    """b nuked a's write, and echoes a's entry back erased before its tombstone reaches a (pages
    go origin by origin). a cannot tell it yet from a forged tombstone and raises an alarm; once
    the tombstone arrives, a erases its own copy the same way, and the alarm goes (it stayed, and
    status showed the honest pair out of sync for good)."""
    from feral.storage.log.integrity import alarm_counts

    a, b = make_replica("a", A), make_replica("b", B)
    row = a.remember("user", "vault_code", SECRET)
    sync_until_quiet([(a, b)])
    b.nuke(row["id"])
    pages = changes_since(b.conn, {})
    for page in [p for p in pages if p.origin == A]:
        a.apply(page)
    assert alarm_counts(a.conn) == {"": 1}
    for page in [p for p in pages if p.origin == B]:
        a.apply(page)
    assert alarm_counts(a.conn) == {}
    assert export_text(a.conn) == export_text(b.conn)
    assert payloads_holding(a, SECRET) == 0


@pytest.mark.parametrize("forged_too", [False, True])
def test_an_alarm_for_an_erased_copy_goes_when_the_row_moves_past_its_write(
    make_replica, forged_too: bool
):
    """a takes b's erased copy of its write ahead of b's tombstone: an alarm, since the write is
    still a's row. Then d's archive, made without hearing of the nuke, moves the row past it:
    the copy can change nothing now, and the tombstone may never come (outdated by the
    archive, a snapshot would not carry it), so the alarm goes. Unless the same sender also
    sent a copy of that write with other words: that is a forgery, and the alarm stays."""
    from feral.storage.log.integrity import alarm_counts

    a, b, d, _ = nuked_here_archived_there(make_replica)
    for page in [p for p in changes_since(b.conn, {}) if p.origin == A]:
        a.apply(page)
    if forged_too:
        written = next(p for p in changes_since(a.conn, {}) if p.origin == A)
        words = tuple("other words" if v == SECRET else v for v in written.deltas[0].values or ())
        a.apply(replace(written, deltas=(replace(written.deltas[0], values=words),)))
    raised = alarm_counts(a.conn)
    assert raised == {"": 2 if forged_too else 1}
    for page in changes_since(d.conn, version_vector(a.conn)):
        a.apply(page)
    assert alarm_counts(a.conn) == (raised if forged_too else {})


def test_an_erased_copy_is_no_collision_where_the_write_came_after_its_tombstone(make_replica):
    """c took d's archive (newer than b's nuke, made without hearing of it), then the nuke, then
    a's write from before it, which keeps its words there (the row is live again). b's erased copy
    of that write is the same write, not a forged tombstone."""
    from feral.storage.log.integrity import find_collisions

    a, b, d, _ = nuked_here_archived_there(make_replica)
    c = make_replica("c", C)
    for origin, sender in ((D, d), (B, b), (A, a)):
        for page in changes_since(sender.conn, {}):
            if page.origin == origin:
                c.apply(page)
    erased = [dl for p in changes_since(b.conn, {}) if p.origin == A for dl in p.deltas]
    assert erased[0].values is None
    assert find_collisions(c.conn, A, erased) == []


def test_an_erased_copy_of_a_write_its_row_outgrew_is_no_alarm_and_its_tombstone_erases_it(
    make_replica,
):
    """b nuked a's write; d, not having heard of it, archived the row later. a takes d's archive
    first, then b's erased copy of a's write: a's row has outgrown that write, so the copy is
    the same write, not a forged tombstone (no alarm: the tombstone may have been collected
    before it reaches a). When b's tombstone does come, outdated by the archive, it still
    erases a's copy."""
    from feral.storage.log.integrity import alarm_counts

    a, b, d, row_id = nuked_here_archived_there(make_replica)
    for page in changes_since(d.conn, version_vector(a.conn)):
        a.apply(page)
    pages = changes_since(b.conn, {})
    for page in [p for p in pages if p.origin == A]:
        a.apply(page)
    assert alarm_counts(a.conn) == {}
    for page in [p for p in pages if p.origin == B]:
        a.apply(page)
    assert payloads_holding(a, SECRET) == 0  # the tombstone wins over the archive
    assert find_row(a.conn, row_id, live_only=False)[1]["deleted"]
    sync_until_quiet([(a, b), (a, d), (b, d)])
    assert all(alarm_counts(r.conn) == {} for r in (a, b, d))
    assert export_text(a.conn) == export_text(b.conn) == export_text(d.conn)


def test_a_tombstone_that_arrives_after_a_newer_write_wins_over_it_and_erases_every_entry(
    make_replica,
):
    """b nuked a's write; d, not having heard of it, archived the row later. c takes the archive
    first, then a's write, then the tombstone: the tombstone wins over the newer archive (the
    row dies at the archive's version), every entry loses its words, and a device that joins
    later from c never receives them."""
    a, b, d, row_id = nuked_here_archived_there(make_replica)
    c = make_replica("c", C)
    archive = [p for p in changes_since(d.conn, {}) if p.origin == D]
    for origin, sender in ((D, d), (A, a), (B, b)):
        for page in changes_since(sender.conn, {}):
            if page.origin == origin:
                c.apply(page)
    entries = [dl for dl in all_deltas(c.conn) if dl.row_id == row_id]
    assert [dl.values for dl in entries] == [None, None, None]
    assert payloads_holding(c, SECRET) == 0
    row = find_row(c.conn, row_id, live_only=False)[1]
    assert row["deleted"] and row["origin"] == D  # dead, at the archive's version
    late = make_replica("late", NodeId("e" * 32))
    for page in changes_since(c.conn, {}):
        if page.origin != D:
            late.apply(page)
    assert payloads_holding(late, SECRET) == 0
    for page in archive:
        late.apply(page)
    assert export_text(late.conn) == export_text(c.conn)


def test_a_write_older_than_a_tombstone_arriving_after_the_tombstone_is_erased(
    make_replica,
):
    """c holds the nuke and the newer archive (which the nuke outlives), then a's write from
    before the nuke arrives: it is logged as a tombstone at its own stamp."""
    a, b, d, _ = nuked_here_archived_there(make_replica)
    c = make_replica("c", C)
    for origin, sender in ((B, b), (D, d), (A, a)):
        for page in changes_since(sender.conn, {}):
            if page.origin == origin:
                c.apply(page)
    assert [dl.values for dl in all_deltas(c.conn) if dl.origin == A] == [None]
    assert payloads_holding(c, SECRET) == 0


def test_the_log_index_migration_erases_what_an_older_database_kept(tmp_path):
    """A database from before 0010_log_tombstones may hold words below a tombstone of a row that
    was written again (the gap the migration closes): the migration erases them, and withdraws
    the alarms on those entries."""
    from feral.storage.db.connection import connect
    from feral.storage.db.migrations import MIGRATIONS, apply_migrations

    conn = connect(tmp_path / "old.db")
    try:
        before = [m.name for m in MIGRATIONS].index("0010_log_tombstones")
        apply_migrations(conn, MIGRATIONS[:before])
        rows = [
            (A, 1, 2, "r", b"words"),  # below the tombstone: erased
            (B, 2, 2, "r", None),  # the tombstone
            (C, 3, 2, "r", b"later"),  # the later write keeps its words
            (A, 4, 2, "other", b"kept"),  # another row
        ]
        conn.executemany("INSERT INTO delta_log VALUES (?, ?, ?, ?, ?)", rows)
        conn.execute(
            "INSERT INTO integrity_alarms(origin, hlc, peer, tbl, row_id, first_at, last_at, "
            "count) VALUES (?, 1, 'p', 2, 'r', 0, 0, 1)",
            (A,),
        )
        apply_migrations(conn)
        held = conn.execute("SELECT hlc, payload FROM delta_log ORDER BY hlc").fetchall()
        assert held == [(1, None), (2, None), (3, b"later"), (4, b"kept")]
        assert conn.execute("SELECT count(*) FROM integrity_alarms").fetchone()[0] == 0
    finally:
        conn.close()


def test_the_erase_probes_read_the_partial_index_not_every_entry_of_the_table(make_replica):
    """Each local write probes the log for erased entries; read through the index by row that
    concurrent-edit detection added, the probe scanned every entry of the table, so a bulk
    import slowed with each row it had written."""
    from feral.storage.log.erase import LOGS_ERASED

    conn = make_replica("a", A).conn
    plan = " ".join(str(row[3]) for row in conn.execute(f"EXPLAIN QUERY PLAN {LOGS_ERASED}", (2,)))
    assert "delta_log_tombstones" in plan, plan


def test_an_erased_copy_is_no_collision_on_a_dead_row_whose_erased_entries_were_pruned(
    make_replica,
):
    """b nuked a's write; a month later d, not having heard of it, archived the row, and a took
    the archive with its words. c holds the row dead, d's archive erased, and has pruned the
    older entries (the write and the tombstone). a's copy of the archive, words and all, is the
    same write: c's row is dead, so every entry of it is erased here anyway. The convergence
    machine's long run found this as an integrity alarm between honest devices that stood for
    good (seed 2100008958: the entries that explained the copy had been pruned)."""
    from feral.storage.log.integrity import alarm_counts, find_collisions
    from feral.storage.log.prune import apply_prune
    from feral.storage.store import run_write

    a, b, c, d = (make_replica(n, i) for n, i in (("a", A), ("b", B), ("c", C), ("d", D)))
    row = a.remember("user", "vault_code", SECRET)
    for other in (b, c, d):
        pull(other, a)
    b.nuke(row["id"])
    month = 30 * 86_400_000
    for replica in (a, b, c, d):
        replica.time.advance(month)
    d.archive(row["id"])
    sync_until_quiet([(a, d)])
    sync_until_quiet([(b, d)])
    sync_until_quiet([(c, b)])
    assert find_row(c.conn, row["id"], live_only=False)[1]["deleted"]
    run_write(c.conn, apply_prune, paired=[], now_ms=c.time(), window_ms=month // 2)
    assert [dl.origin for dl in all_deltas(c.conn) if dl.row_id == row["id"]] == [D]
    with_words = [dl for p in changes_since(a.conn, {}) if p.origin == D for dl in p.deltas]
    assert with_words and with_words[0].values is not None
    assert find_collisions(c.conn, D, with_words) == []
    sync_until_quiet([(c, a)])
    assert alarm_counts(c.conn) == {}
    assert payloads_holding(c, SECRET) == 0


def test_an_alarm_for_an_erased_copy_goes_when_an_older_tombstone_kills_the_row(make_replica):
    """c holds d's archive with its words (newer than b's nuke, made without hearing of it)
    when e, which took the nuke first, echoes the archive erased: an alarm, since nothing here
    explains it yet. Then b's tombstone comes, older than the archive: it still wins, the row
    dies at the archive's version, and every entry of it is erased here, so the copy is
    explained and the alarm goes."""
    from feral.storage.log.integrity import alarm_counts

    a, b, d, row_id = nuked_here_archived_there(make_replica)
    c, e = make_replica("c", C), make_replica("e", NodeId("e" * 32))
    for receiver, sender in ((c, a), (e, a), (e, b), (e, d), (c, d)):
        while pull(receiver, sender):
            pass
    assert not find_row(c.conn, row_id, live_only=False)[1]["deleted"]
    for page in [p for p in changes_since(e.conn, {}) if p.origin == D]:
        c.apply(page)
    assert alarm_counts(c.conn) == {"": 1}
    for page in [p for p in changes_since(b.conn, {}) if p.origin == B]:
        c.apply(page)
    assert find_row(c.conn, row_id, live_only=False)[1]["deleted"]
    assert alarm_counts(c.conn) == {}
    assert payloads_holding(c, SECRET) == 0
