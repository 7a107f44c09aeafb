"""Slot conflicts on real stores: a single-valued slot holding values no write had seen
together is one conflict, the same on every device, and resolving it leaves one value
everywhere (storage/absorb/slot_conflicts.py); values an edge joins are no conflict."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from feral.storage.absorb import conflicts
from feral.storage.memory.memory_model import add_edge
from feral.storage.store import run_write
from feral.sync.errors import NotFoundError

from .support import A, B, Replica, sync_until_quiet

Make = Callable[..., Replica]


def two_doctors(make_replica: Make) -> tuple[Replica, Replica]:
    """Two synced stores; apart, each sets the user's doctor its own way, then they sync."""
    a, b = make_replica("a", A), make_replica("b", B)
    a.remember("user", "doctor", "Dr. Lee")
    b.remember("User", "doctor_name", "Dr. Patel")
    b.remember("user", "likes", "tea")  # many-valued: never a slot conflict
    sync_until_quiet([(a, b)])
    return a, b


def test_two_values_of_one_slot_are_one_conflict_listed_and_counted_alike(make_replica: Make):
    a, b = two_doctors(make_replica)
    listed = conflicts.list_conflicts(a.conn)
    assert listed == conflicts.list_conflicts(b.conn) and len(listed) == 1
    (slot,) = listed
    assert slot["kind"] == "slot" and slot["slot"] == "user doctor"
    assert sorted(v["object"] for v in slot["values"]) == ["Dr. Lee", "Dr. Patel"]
    assert conflicts.conflict_count(a.conn) == conflicts.conflict_count(b.conn) == 1


def test_resolving_a_slot_keeps_one_value_everywhere(make_replica: Make):
    a, b = two_doctors(make_replica)
    (slot,) = conflicts.list_conflicts(a.conn)
    keep = slot["versions"][[v["object"] for v in slot["values"]].index("Dr. Patel")]
    for bad in (("s" + "0" * 31, keep), (slot["id"], "1:nobody")):
        with pytest.raises(NotFoundError):
            run_write(a.conn, conflicts.resolve, a.node_id, a.clock.tick, *bad, now_ms=a.time())
    a.time.advance()
    done = run_write(a.conn, conflicts.resolve, a.node_id, a.clock.tick, slot["id"], keep,
                     now_ms=a.time())  # fmt: skip
    assert done["resolved"] and done["kept"] == keep
    sync_until_quiet([(a, b)])
    for replica in (a, b):
        assert conflicts.list_conflicts(replica.conn) == []
        live = replica.conn.execute(
            "SELECT object FROM facts WHERE archived = 0 AND predicate LIKE 'doctor%'"
        ).fetchall()
        assert live == [("Dr. Patel",)]


def test_values_an_edge_joins_were_seen_together_and_are_no_conflict(make_replica: Make):
    a, b = two_doctors(make_replica)
    lee, patel = (
        a.conn.execute("SELECT id FROM facts WHERE object = ?", (name,)).fetchone()[0]
        for name in ("Dr. Lee", "Dr. Patel")
    )
    a.time.advance()
    run_write(a.conn, add_edge, a.node_id, a.clock.tick, "related_to", patel, lee,
              now_ms=a.time())  # fmt: skip
    sync_until_quiet([(a, b)])
    assert conflicts.list_conflicts(a.conn) == conflicts.list_conflicts(b.conn) == []
