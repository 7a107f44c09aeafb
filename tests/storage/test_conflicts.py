"""Conflict records on real stores: concurrent edits are recorded once, the same everywhere;
sequential edits, in any order of arrival and through relays, never are
(storage/absorb/conflicts.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from feral.storage.absorb import conflicts
from feral.storage.log.delta_log import apply_page, changes_since, version_vector
from feral.storage.memory.curation import boost
from feral.storage.store import run_write
from feral.sync.conflicts import version_text
from feral.sync.errors import NotFoundError

from .support import WINDOW_MS, A, B, C, Replica, sync_until_quiet

Make = Callable[..., Replica]


def drain(replica: Replica) -> int:
    """What the node does after a page applied: record the queued rows' conflicts."""
    return int(
        run_write(replica.conn, conflicts.record_queued, replica.node_id, replica.clock.tick)
    )


def sync_and_drain(links: list[tuple[Replica, Replica]]) -> None:
    for _ in range(4):
        sync_until_quiet(links)
        for replica in {r.name: r for pair in links for r in pair}.values():
            drain(replica)
    sync_until_quiet(links)


def set_importance(replica: Replica, row_id: str, importance: float) -> None:
    replica.time.advance()
    run_write(replica.conn, boost, replica.node_id, replica.clock.tick, row_id, importance, "")


def one_concurrent_edit(make_replica: Make) -> tuple[Replica, Replica, dict[str, Any]]:
    """Two synced stores, then one fact boosted on each before they sync again (to 3.0 on a,
    to 5.0 on b): one conflict record, drained on both."""
    a, b = make_replica("a", A), make_replica("b", B)
    fact = a.remember("alice", "likes", "tea")
    sync_and_drain([(a, b)])
    set_importance(a, fact["id"], 3.0)
    set_importance(b, fact["id"], 5.0)
    sync_and_drain([(a, b)])
    return a, b, fact


def test_two_devices_editing_one_fact_offline_make_one_record_everywhere(make_replica: Make):
    a, b, fact = one_concurrent_edit(make_replica)
    listed = [conflicts.list_conflicts(r.conn) for r in (a, b)]
    assert listed[0] == listed[1]
    (record,) = listed[0]
    assert record["table"] == "memory_meta" and record["row_id"] == fact["id"]
    assert sorted(v["importance"] for v in record["values"]) == [3.0, 5.0]
    assert record["live"] == record["versions"][1]  # b is the LWW winner of the pair


def test_resolve_keeps_the_chosen_side_everywhere_and_a_later_edit_is_no_conflict(
    make_replica: Make,
):
    a, b, fact = one_concurrent_edit(make_replica)
    (record,) = conflicts.list_conflicts(a.conn)
    loser, lost_value = record["versions"][0], record["values"][0]["importance"]
    a.time.advance()
    run_write(a.conn, conflicts.resolve, A, a.clock.tick, record["id"], loser, now_ms=a.time())
    sync_and_drain([(a, b)])
    for replica in (a, b):
        assert conflicts.list_conflicts(replica.conn) == []
        (done,) = conflicts.list_conflicts(replica.conn, include_resolved=True)
        assert done["resolved"] and done["kept"] == loser
        meta = replica.conn.execute(
            "SELECT importance FROM memory_meta WHERE id = ?", (fact["id"],)
        ).fetchone()
        assert meta[0] == lost_value
    set_importance(b, fact["id"], 7.0)
    sync_and_drain([(a, b)])
    assert conflicts.conflict_count(a.conn) == conflicts.conflict_count(b.conn) == 0


def test_a_chain_of_edits_received_out_of_order_through_a_relay_is_no_conflict(
    make_replica: Make,
):
    """A writes v1, B overwrites it (v2), C overwrites v2 (v3); a fourth store receives C's,
    then A's, then B's entries, each origin through a relay."""
    a, b, c = make_replica("a", A), make_replica("b", B), make_replica("c", C)
    fact = a.remember("alice", "likes", "tea")
    set_importance(a, fact["id"], 1.5)
    sync_and_drain([(a, b)])
    set_importance(b, fact["id"], 2.5)
    sync_and_drain([(b, c)])
    set_importance(c, fact["id"], 3.5)
    sync_and_drain([(b, c), (a, b)])  # b relays c's and its own to a, and a's to c
    d = make_replica("d", "d" * 32)
    for origin in (C, A, B):  # out of order: the newest edit first
        for page in changes_since(a.conn, {**version_vector(d.conn), **{}}, 1000):
            if page.origin == origin:
                run_write(d.conn, apply_page, page, now_ms=d.time(), max_skew_ms=WINDOW_MS)
        drain(d)
    assert version_vector(d.conn) == version_vector(a.conn)
    for replica in (a, b, c, d):
        assert conflicts.list_conflicts(replica.conn, include_resolved=True) == []


def test_relays_pass_the_prior_on_unchanged(make_replica: Make):
    a, b, c = make_replica("a", A), make_replica("b", B), make_replica("c", C)
    fact = a.remember("alice", "likes", "tea")
    set_importance(a, fact["id"], 2.0)
    set_importance(a, fact["id"], 3.0)
    sync_and_drain([(a, b), (b, c)])
    sent = [d for p in changes_since(a.conn, {}, 1000) for d in p.deltas]
    relayed = [d for p in changes_since(c.conn, {}, 1000) for d in p.deltas]
    assert sent == relayed and any(d.prior is not None for d in sent)


def test_three_way_race_reports_every_pair_once_everywhere(make_replica: Make):
    a, b, c = make_replica("a", A), make_replica("b", B), make_replica("c", C)
    fact = a.remember("alice", "likes", "tea")
    sync_and_drain([(a, b), (b, c)])
    for replica, importance in ((a, 2.0), (b, 3.0), (c, 4.0)):
        set_importance(replica, fact["id"], importance)
    sync_and_drain([(a, b), (b, c)])
    lists = [conflicts.list_conflicts(r.conn) for r in (a, b, c)]
    assert lists[0] == lists[1] == lists[2]
    assert len(lists[0]) == 3  # every pair of the three concurrent boosts


def test_resolving_refuses_unknown_ids_and_versions(make_replica: Make):
    a, b, fact = one_concurrent_edit(make_replica)
    (record,) = conflicts.list_conflicts(a.conn)
    for conflict, keep in (("cnope", record["versions"][0]), (record["id"], "12:zz"),
                           (record["id"], "not-a-version")):  # fmt: skip
        with pytest.raises(NotFoundError):
            run_write(a.conn, conflicts.resolve, A, a.clock.tick, conflict, keep, now_ms=1)
    assert version_text(None) == ""


def test_a_nuke_takes_the_rows_conflict_records_with_it(make_replica: Make):
    a, b, fact = one_concurrent_edit(make_replica)
    a.nuke(fact["id"])
    sync_and_drain([(a, b)])
    for replica in (a, b):
        assert conflicts.list_conflicts(replica.conn, include_resolved=True) == []
