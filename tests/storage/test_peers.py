"""storage/link/peers.py: what a node records about each peer, on a real database file."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from feral.storage.db.connection import Connection
from feral.storage.link.peers import (
    backlog_for,
    diverged,
    link_rows,
    peer_statuses,
    record_ack,
    record_attempt,
    record_error,
    record_incoming,
    record_link_down,
    record_link_up,
    record_pending,
    record_session,
    record_sync,
    record_transfer,
)
from feral.storage.store import run_write

from .support import T0, A, B, C, Replica, pull

PEER = B
URL = "ws://127.0.0.1:9090"


def status(conn: Connection) -> dict[str, Any]:
    return peer_statuses(conn)[PEER]


def test_nothing_is_recorded_about_a_peer_never_tried(conn: Connection) -> None:
    assert peer_statuses(conn) == {}


def test_an_attempt_creates_the_peer_with_defaults(conn: Connection) -> None:
    run_write(conn, record_attempt, PEER, URL, T0)
    assert status(conn) == {
        "node_id": PEER,
        "name": "",
        "url": URL,
        "reachable": False,
        "last_attempt_at": T0,
        "last_sync_at": None,
        "last_error": None,
        "last_error_at": None,
        "errors": 0,
        "clock_offset_ms": None,
        "vector": {},
        "encrypted": False,
        "rows_received": 0,
        "rows_sent": 0,
        "entries": {},
        "digest": b"",
        "digest_vector": None,
        "incoming_total": 0,
        "incoming_done": 0,
        "link_down_at": None,
        "certificate": None,
        "backlog": 0,
    }


def test_an_attempt_without_a_url_keeps_the_url_known(conn: Connection) -> None:
    run_write(conn, record_attempt, PEER, URL, T0)
    run_write(conn, record_attempt, PEER, None, T0 + 5)
    assert (status(conn)["url"], status(conn)["last_attempt_at"]) == (URL, T0 + 5)


def test_a_session_marks_the_peer_reachable_with_its_name_and_clock(conn: Connection) -> None:
    run_write(conn, record_session, PEER, name="phone", clock_offset_ms=-42, encrypted=True,
              now_ms=T0)  # fmt: skip
    row = status(conn)
    assert (row["name"], row["reachable"], row["clock_offset_ms"]) == ("phone", True, -42)
    assert (row["encrypted"], row["last_attempt_at"]) == (True, T0)


def test_transfers_add_up(conn: Connection) -> None:
    run_write(conn, record_transfer, PEER, received=3)
    run_write(conn, record_transfer, PEER, received=2, sent=7)
    row = status(conn)
    assert (row["rows_received"], row["rows_sent"]) == (5, 7)


def test_a_sync_stores_the_peers_vector_and_time(conn: Connection) -> None:
    run_write(conn, record_sync, PEER, {A: 10, C: 4}, T0)
    row = status(conn)
    assert row["vector"] == {A: 10, C: 4}
    assert (row["last_sync_at"], row["reachable"]) == (T0, True)
    run_write(conn, record_sync, PEER, {A: 12}, T0 + 1)
    assert status(conn)["vector"] == {A: 12}


def test_acks_raise_the_peers_vector_and_never_lower_it(conn: Connection) -> None:
    run_write(conn, record_sync, PEER, {A: 10}, T0)
    run_write(conn, record_ack, PEER, A, 15)
    run_write(conn, record_ack, PEER, C, 3)
    run_write(conn, record_ack, PEER, A, 12)
    row = status(conn)
    assert row["vector"] == {A: 15, C: 3}
    assert row["last_sync_at"] == T0


def test_an_ack_from_a_peer_never_synced_starts_its_vector(conn: Connection) -> None:
    run_write(conn, record_ack, PEER, A, 9)
    assert status(conn)["vector"] == {A: 9}
    assert status(conn)["last_sync_at"] is None


def test_errors_are_counted_and_the_last_one_kept(conn: Connection) -> None:
    run_write(conn, record_session, PEER, name="p", clock_offset_ms=0, encrypted=False, now_ms=T0)
    run_write(conn, record_error, PEER, "refused: not_paired", T0 + 1, unreachable=False)
    row = status(conn)
    assert (row["last_error"], row["last_error_at"], row["errors"]) == (
        "refused: not_paired", T0 + 1, 1,
    )  # fmt: skip
    assert row["reachable"] is True
    run_write(conn, record_error, PEER, "cannot reach", T0 + 2, unreachable=True)
    row = status(conn)
    assert (row["last_error"], row["errors"], row["reachable"]) == ("cannot reach", 2, False)


def test_a_long_error_is_cut_to_500_characters(conn: Connection) -> None:
    run_write(conn, record_error, PEER, "x" * 2000, T0, unreachable=True)
    assert status(conn)["last_error"] == "x" * 500


def test_peers_are_recorded_separately(conn: Connection) -> None:
    run_write(conn, record_error, B, "b failed", T0, unreachable=True)
    run_write(conn, record_sync, C, {}, T0)
    statuses = peer_statuses(conn)
    assert set(statuses) == {B, C}
    assert statuses[C]["last_error"] is None
    assert statuses[B]["last_sync_at"] is None


# Backlog


def test_backlog_counts_the_log_entries_a_peer_lacks(make_replica: Callable[..., Replica]) -> None:
    a = make_replica("a", A)
    stamps = [a.remember("a", "wrote", str(n))["hlc"] for n in range(4)]
    assert backlog_for(a.conn, {}) == 4
    assert backlog_for(a.conn, {A: stamps[1]}) == 2
    assert backlog_for(a.conn, {A: stamps[-1]}) == 0
    assert backlog_for(a.conn, {A: stamps[-1] + 1, C: 99}) == 0


def test_backlog_counts_relayed_entries_per_origin(make_replica: Callable[..., Replica]) -> None:
    a, b = make_replica("a", A), make_replica("b", B)
    a.remember("a", "wrote", "one")
    a.remember("a", "wrote", "two")
    mine = b.remember("b", "wrote", "one")["hlc"]
    pull(b, a)
    assert backlog_for(b.conn, {}) == 3
    assert backlog_for(b.conn, {B: mine}) == 2
    assert backlog_for(b.conn, {A: 1 << 62}) == 1


def test_peer_statuses_count_each_peers_backlog(make_replica: Callable[..., Replica]) -> None:
    a = make_replica("a", A)
    first = a.remember("a", "wrote", "one")["hlc"]
    a.remember("a", "wrote", "two")
    run_write(a.conn, record_sync, B, {A: first}, T0)
    run_write(a.conn, record_attempt, C, URL, T0)
    statuses = peer_statuses(a.conn)
    assert (statuses[B]["backlog"], statuses[C]["backlog"]) == (1, 2)


def test_a_completed_exchange_clears_the_last_error_and_keeps_its_count(conn: Connection) -> None:
    run_write(conn, record_error, PEER, "cannot reach it", T0, unreachable=True)
    assert (status(conn)["last_error"], status(conn)["last_error_at"]) == ("cannot reach it", T0)
    run_write(conn, record_sync, PEER, {A: 10}, T0 + 5)
    row = status(conn)
    assert (row["last_error"], row["last_error_at"], row["errors"]) == (None, None, 1)


def test_an_announced_stream_counts_its_progress_until_the_peer_caught_up(
    conn: Connection,
) -> None:
    run_write(conn, record_pending, PEER, 2500)
    assert run_write(conn, record_incoming, PEER, 1000) == (1000, 2500)
    assert run_write(conn, record_incoming, PEER, 2000) == (2500, 2500)  # never past the total
    run_write(conn, record_pending, PEER, 0)  # nothing to send: the last figures stay
    assert (status(conn)["incoming_done"], status(conn)["incoming_total"]) == (2500, 2500)
    run_write(conn, record_pending, PEER, 40)
    run_write(conn, record_sync, PEER, {A: 10}, T0)
    assert (status(conn)["incoming_done"], status(conn)["incoming_total"]) == (40, 40)


def test_a_link_is_recorded_with_its_process_while_it_is_up(conn: Connection) -> None:
    run_write(conn, record_link_up, "link-1", PEER, T0)
    ((peer, pid, up, seen),) = link_rows(conn)
    assert (peer, pid, up, seen) == (PEER, os.getpid(), T0, T0)
    run_write(conn, record_link_down, "link-1", PEER, T0 + 9)
    assert link_rows(conn) == []
    assert status(conn)["link_down_at"] == T0 + 9


def test_divergence_is_judged_only_at_equal_vectors_and_counts() -> None:
    one, two = b"1" * 32, b"2" * 32
    assert diverged({A: 5}, {A: 2}, one, {A: 5}, {A: 2}, two)
    assert not diverged({A: 5}, {A: 2}, one, {A: 5}, {A: 2}, one)
    assert not diverged({A: 5}, {A: 2}, one, {A: 6}, {A: 3}, two)
    assert not diverged({A: 5}, {A: 2}, one, {A: 5}, {A: 1}, two)
    assert not diverged({A: 5}, {A: 2}, one, {A: 5}, {A: 2}, b"")


def test_a_session_records_its_certificate_and_a_plain_one_clears_it(conn: Connection) -> None:
    fingerprint = "5E:FB:36:46"
    run_write(conn, record_session, PEER, name="b", clock_offset_ms=0, encrypted=True,
              now_ms=T0, certificate=fingerprint)  # fmt: skip
    assert (status(conn)["encrypted"], status(conn)["certificate"]) == (True, fingerprint)
    run_write(conn, record_session, PEER, name="b", clock_offset_ms=0, encrypted=False,
              now_ms=T0 + 1)  # fmt: skip
    assert (status(conn)["encrypted"], status(conn)["certificate"]) == (False, None)
