"""``restamp_ahead``: a node's writes stamped ahead of its clock, stamped again (issue 11, #6).

Real database files, manual clocks. A laptop writes while its clock is two hours ahead; the
clock is put right; its writes are stamped again just above the clock, in their order, and a
peer with a right clock then takes them.
"""

from __future__ import annotations

import json

import pytest

from feral.storage.log import row_digest
from feral.storage.log.delta_log import log_entry_counts, version_vector
from feral.storage.log.restamp import restamp_ahead
from feral.storage.memory.export import export_lines
from feral.storage.memory.memories import find_row
from feral.storage.store import run_write
from feral.sync.errors import ClockError, ClockSkewError
from feral.sync.hlc import COUNTER_BITS
from feral.sync.ids import fact_id
from feral.sync.types import PackedHLC

from .support import T0, A, B, pull

HOUR_MS = 3_600_000


def log_of(conn, origin):
    return conn.execute(
        "SELECT hlc, row_id FROM delta_log WHERE origin = ? ORDER BY hlc", (origin,)
    ).fetchall()


def test_writes_ahead_are_stamped_again_in_order_above_the_clock_and_then_accepted(make_replica):
    laptop = make_replica("laptop", A)
    server = make_replica("server", B)
    laptop.remember("before", "is", "on time")
    laptop.time.advance(2 * HOUR_MS)
    for word in ("first", "second", "third"):
        laptop.remember(word, "is", "ahead")
    laptop.time.advance(-2 * HOUR_MS)  # the clock is put right
    with pytest.raises(ClockSkewError):
        pull(server, laptop)
    rows_before = [find_row(laptop.conn, r)[1]["object"] for _, r in log_of(laptop.conn, A)]
    counts = log_entry_counts(laptop.conn)

    done = run_write(laptop.conn, restamp_ahead, A, laptop.time(), 0)

    assert done.entries == 3
    log = log_of(laptop.conn, A)
    assert [find_row(laptop.conn, r)[1]["object"] for _, r in log] == rows_before
    stamps = [h for h, _ in log]
    assert stamps == sorted(stamps) and max(stamps) >> COUNTER_BITS <= laptop.time() + 1
    assert version_vector(laptop.conn)[A] == max(stamps) == done.newest_after
    assert log_entry_counts(laptop.conn) == counts
    for _, row_id in log:
        _, row = find_row(laptop.conn, row_id)
        assert row["hlc"] in stamps
    laptop.clock.last = PackedHLC(done.newest_after)  # the node lowers it through the mark
    assert laptop.remember("after", "is", "on time")["hlc"] > max(stamps)
    while pull(server, laptop):
        pass
    assert list(export_lines(server.conn)) == list(export_lines(laptop.conn))
    for node in (laptop, server):  # the digest moved once for the row, not twice
        assert row_digest.row_digest(node.conn) == row_digest.computed_afresh(node.conn)


def test_a_peers_version_that_now_outranks_the_restamped_one_wins(make_replica):
    laptop = make_replica("laptop", A)
    server = make_replica("server", B)
    server.remember("shared", "is", "fact")
    pull(laptop, server)
    laptop.time.advance(2 * HOUR_MS)
    laptop.archive(fact_id("shared", "is", "fact"))  # wins locally, stamped two hours ahead
    laptop.time.advance(-2 * HOUR_MS)
    server.time.advance(60_000)
    server.archive(fact_id("shared", "is", "fact"), False)  # a minute later, in real time
    pull(laptop, server)
    assert find_row(laptop.conn, fact_id("shared", "is", "fact"))[1]["archived"] is True

    run_write(laptop.conn, restamp_ahead, A, laptop.time(), 0)

    _, row = find_row(laptop.conn, fact_id("shared", "is", "fact"))
    assert (row["archived"], row["origin"]) == (False, B)
    while pull(server, laptop):
        pass
    assert list(export_lines(server.conn)) == list(export_lines(laptop.conn))


def test_restamping_is_refused_when_a_peer_already_holds_the_writes_ahead(make_replica):
    laptop = make_replica("laptop", A)
    laptop.time.advance(2 * HOUR_MS)
    held = laptop.remember("taken", "is", "already")["hlc"]
    laptop.time.advance(-2 * HOUR_MS)
    laptop.conn.execute(
        "INSERT INTO peer_status(node_id, name, vector) VALUES (?, 'server', ?)",
        (B, json.dumps({A: held})),
    )
    before = log_of(laptop.conn, A)
    with pytest.raises(ClockError, match=r"server \(.*already holds.*new identity"):
        run_write(laptop.conn, restamp_ahead, A, laptop.time(), 0)
    assert log_of(laptop.conn, A) == before


def test_nothing_ahead_changes_nothing_but_a_mark_ahead_is_reported_as_lowered(make_replica):
    laptop = make_replica("laptop", A)
    newest = laptop.remember("on", "time", "write")["hlc"]
    done = run_write(laptop.conn, restamp_ahead, A, laptop.time() + 1, (T0 + 400 * HOUR_MS) << 16)
    assert done.entries == 0 and done.newest_after == newest
    assert done.newest_before > newest


def test_the_kept_row_digest_follows_the_rows_stamped_again(make_replica):
    """The digest a CaughtUp carries is kept write by write: rows stamped again change it, or
    the peer that then takes them sees equal logs and other rows (a false divergence)."""
    laptop = make_replica("laptop", A)
    server = make_replica("server", B)
    laptop.time.advance(2 * HOUR_MS)
    laptop.remember("written", "while", "ahead")
    laptop.time.advance(-2 * HOUR_MS)
    run_write(laptop.conn, restamp_ahead, A, laptop.time(), 0)
    assert row_digest.row_digest(laptop.conn) == row_digest.computed_afresh(laptop.conn)
    pull(server, laptop)
    assert row_digest.row_digest(server.conn) == row_digest.row_digest(laptop.conn)
