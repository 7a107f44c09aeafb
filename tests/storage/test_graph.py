"""storage/memory/graph.py: entities and relations read from facts, traversal, and convergence."""

from __future__ import annotations

import pytest

from feral.storage.memory.graph import list_entities, relate, traverse
from feral.storage.memory.memories import set_archived
from feral.storage.memory.memory_model import add_entity
from feral.storage.store import run_write
from feral.sync.errors import NotFoundError
from feral.sync.ids import entity_id

from .support import A, B, Replica, assert_converged, sync_until_quiet


def _relate(replica: Replica, source: str, relation: str, target: str) -> dict:
    replica.time.advance()
    return run_write(
        replica.conn,
        relate,
        replica.node_id,
        replica.clock.tick,
        tuple(source.split(":", 1)),
        relation,
        tuple(target.split(":", 1)),
        now_ms=replica.time(),
    )


def _entity(replica: Replica, entity_type: str, name: str) -> dict:
    replica.time.advance()
    return run_write(
        replica.conn,
        add_entity,
        replica.node_id,
        replica.clock.tick,
        entity_type,
        name,
        now_ms=replica.time(),
    )


def _names(results: list[dict]) -> list[tuple[int, str]]:
    return [(r["hops"], f"{r['type']}:{r['name']}") for r in results]


@pytest.fixture
def places(make_replica) -> Replica:
    """A small map with a cycle: Kreuzberg in Berlin in Germany, and Germany 'in' Kreuzberg."""
    replica = make_replica("laptop", A)
    _relate(replica, "place:Kreuzberg", "located_in", "place:Berlin")
    _relate(replica, "place:Mitte", "located_in", "place:Berlin")
    _relate(replica, "place:Berlin", "located_in", "place:Germany")
    _relate(replica, "company:Acme", "located_in", "place:Kreuzberg")
    _relate(replica, "person:Sam", "works_at", "company:Acme")
    _relate(replica, "place:Germany", "located_in", "place:Kreuzberg")  # a cycle, on purpose
    return replica


def test_inbound_traversal_goes_hop_by_hop_in_one_order(places):
    start = ("place", "Berlin")
    one = traverse(places.conn, start, relations={"located_in"}, direction="inbound", hops=1)
    assert _names(one) == [(1, "place:Kreuzberg"), (1, "place:Mitte")]
    two = traverse(places.conn, start, relations={"located_in"}, direction="inbound", hops=2)
    assert _names(two) == [
        (1, "place:Kreuzberg"),
        (1, "place:Mitte"),
        (2, "company:Acme"),
        (2, "place:Germany"),
    ]
    assert two[2]["via"]["from"] == entity_id("place", "Kreuzberg")
    assert two[2]["via"]["direction"] == "inbound"


def test_a_cycle_visits_each_entity_once_however_many_hops(places):
    results = traverse(places.conn, ("place", "Kreuzberg"), direction="both", hops=6)
    names = [name for _, name in _names(results)]
    assert len(names) == len(set(names)) == 5
    assert "place:Kreuzberg" not in names
    outbound = traverse(places.conn, ("place", "Kreuzberg"), hops=6)
    assert _names(outbound) == [(1, "place:Berlin"), (2, "place:Germany")]


def test_only_the_relations_asked_for_are_followed_and_the_limit_holds(places):
    start = ("person", "Sam")
    assert _names(traverse(places.conn, start, relations={"located_in"}, hops=3)) == []
    assert _names(traverse(places.conn, start, hops=3)) == [
        (1, "company:Acme"),
        (2, "place:Kreuzberg"),
        (3, "place:Berlin"),
    ]
    assert len(traverse(places.conn, start, hops=3, limit=2)) == 2


def test_an_archived_fact_is_no_longer_a_relation(places):
    fact = _relate(places, "place:Mitte", "located_in", "place:Berlin")
    run_write(places.conn, set_archived, places.node_id, places.clock.tick, fact["id"], True)
    start = ("place", "Berlin")
    assert "place:Mitte" not in [
        n for _, n in _names(traverse(places.conn, start, direction="inbound"))
    ]


def test_an_unknown_start_or_hop_count_is_refused(places):
    with pytest.raises(NotFoundError):
        traverse(places.conn, ("place", "Atlantis"))
    with pytest.raises(ValueError):
        traverse(places.conn, ("place", "Berlin"), hops=0)


def test_attributes_are_facts_and_conflicting_values_stay_visible(make_replica):
    laptop = make_replica("laptop", A)
    _entity(laptop, "person", "Sam")
    laptop.remember("sam", "doctor", "Dr. Lee")
    laptop.remember("Sam", "doctor", "Dr. Patel")
    laptop.remember("Sam", "likes", "tea")
    laptop.remember("Sam", "likes", "chess")
    (sam,) = list_entities(laptop.conn, "person", {"doctor"})
    assert sam["attributes"] == {"doctor": ["Dr. Lee", "Dr. Patel"], "likes": ["chess", "tea"]}
    assert sam["conflicting"] == ["doctor"]


def test_two_devices_naming_colliding_entities_converge_with_identical_queries(make_replica):
    laptop, phone = make_replica("laptop", A), make_replica("phone", B)
    _relate(laptop, "place:Berlin", "located_in", "place:Germany")
    _relate(laptop, "person:Sam", "lives_in", "place:berlin")
    _relate(phone, "place:  BERLIN ", "located_in", "place:Germany")
    _relate(phone, "company:Acme", "located_in", "place:Berlin")
    _entity(phone, "person", "sam")
    sync_until_quiet([(laptop, phone)])
    assert_converged(laptop, phone)
    start = ("place", "germany")
    answers = [traverse(r.conn, start, direction="inbound", hops=2) for r in (laptop, phone)]
    assert answers[0] == answers[1]
    # The display name is the last write's (last-write-wins), the same on both.
    assert sorted(n.casefold() for _, n in _names(answers[0])) == [
        "company:acme",
        "person:sam",
        "place:berlin",
    ]
    listed = [list_entities(r.conn, None, set()) for r in (laptop, phone)]
    assert listed[0] == listed[1]
    assert [e["type"] for e in listed[0]] == ["company", "person", "place", "place"]
