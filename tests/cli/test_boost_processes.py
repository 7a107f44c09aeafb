"""A boost and a scope made with the CLI reach the other device through real ``feral serve``s."""

from __future__ import annotations

import json

import pytest

from .servers import Mesh, pair, wait_until

SYNC_WAIT_S = 30


@pytest.mark.slow
def test_a_boost_and_a_scope_made_on_the_laptop_rank_and_list_on_the_phone(mesh: Mesh):
    laptop, phone = mesh.add("laptop", "phone")
    pair(laptop, phone, dial=True)
    pair(phone, laptop, dial=False)
    tea = json.loads(laptop.cli("memory", "remember", "I like green tea", "--json"))["id"]
    gate = laptop.cli("memory", "remember", "the gate is B12", "--scope", "session:trip", "--json")
    mesh.start(laptop, phone)
    assert wait_until(lambda: phone.count() == 2, SYNC_WAIT_S), "the facts did not arrive"

    laptop.run("memory", "boost", tea, "2.5", "--reason", "every morning")  # beside the server

    def boosted() -> bool:
        rows = phone.query("SELECT importance FROM memory_meta WHERE id = ?", tea)
        return rows == [(2.5,)]

    assert wait_until(boosted, SYNC_WAIT_S), "the boost did not reach the phone"
    listed = json.loads(phone.cli("memory", "list", "--json"))
    assert {r["id"]: r["meta"]["importance"] for r in listed}[tea] == 2.5
    hits = json.loads(phone.cli("memory", "search", "green tea", "--json"))["results"]
    assert (hits[0]["id"], hits[0]["importance"]) == (tea, 2.5)
    scoped = json.loads(phone.cli("memory", "list", "--scope", "session:trip", "--json"))
    assert [r["id"] for r in scoped] == [json.loads(gate)["id"]]
    assert wait_until(lambda: laptop.export() == phone.export(), SYNC_WAIT_S), "exports differ"
